import { randomUUID } from 'node:crypto';
import { loadConfig } from '@booking/config';
import { createPgPool } from '@booking/db';
import { createIsolatedDatabase, sleep, waitUntil } from '@booking/test-kit';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import type { PoolClient } from 'pg';
import { startRelayProcess, type RelayChild } from './support/relay-child';

// A drain relays with two lanes, each its own statement on its own connection. When one fails
// (its backend terminated here, for real) while the other still runs, the relay must wait for
// both, log the failure once, and relay what the failed lane had claimed: its process must not
// end (it runs as its own OS process under Node's default unhandled-rejection mode, see
// support/relay-child.ts). Both lanes' statements wait on a row lock this test holds (the
// endpoint's, which each new delivery's foreign key must share) until it lets go. Real PostgreSQL
// (a database of its own) and Redis (a queue prefix of its own).

const QUIET_EVENTS = 1_000; // a tenant with no endpoint: no deliveries, no lock
const LOCKED_EVENTS = 2_500; // then events of a tenant whose only endpoint this test locks

describe('the outbox relay when one lane fails while the other still runs', () => {
  it('when one lane’s connection is terminated, then the process lives on, logs the failure once, and every event is relayed', async () => {
    const isolated = await createIsolatedDatabase();
    const prefix = `relay-lanes-${randomUUID()}`;
    const env = {
      ...isolated.env,
      QUEUE_PREFIX: prefix,
      WEBHOOK_RETRY_DELAYS_MS: '0',
      WEBHOOK_RELAY_INTERVAL_MS: '60000', // one drain, at start
      // The lanes' statements wait on the lock as long as the test holds it.
      DB_STATEMENT_TIMEOUT_MS: '60000',
    };
    const config = loadConfig({ ...process.env, ...env });
    // The lock is held in a transaction left idle for as long as the test needs it.
    const sql = createPgPool(config.databaseUrl, { poolSize: 3, transactionTimeoutMs: 120_000 });
    const connection = queueConnection(config.redisUrl);
    const queue = createDeliveryQueue(connection, prefix);
    let locker: PoolClient | undefined;
    let relay: RelayChild | undefined;
    try {
      locker = await sql.connect();
      locker.on('error', () => undefined);
      const tenant = async (slug: string) =>
        (
          await sql.query<{ id: string }>(
            `INSERT INTO tenants (id, slug, name) VALUES (gen_random_uuid(), $1, 'Relay lanes') RETURNING id`,
            [slug],
          )
        ).rows[0]!.id;
      const quiet = await tenant('relay-lanes-quiet');
      const locked = await tenant('relay-lanes-locked');
      const endpoint = (
        await sql.query<{ id: string }>(
          `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret_ciphertext, updated_at)
           VALUES (gen_random_uuid(), $1, 'https://receiver.test/hook', '{booking.created}', 'not-used-here', now())
           RETURNING id`,
          [locked],
        )
      ).rows[0]!.id;
      // The quiet tenant's events are the oldest: the first batch is theirs.
      await sql.query(
        `INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data, created_at)
         SELECT gen_random_uuid(), CASE WHEN n <= $3 THEN $1 ELSE $2 END::uuid, 'booking.created', 'booking',
                gen_random_uuid(), 1, '{}'::jsonb, now() - interval '1 hour' + make_interval(secs => n / 1000.0)
         FROM generate_series(1, $3::int + $4::int) AS n`,
        [quiet, locked, QUIET_EVENTS, LOCKED_EVENTS],
      );
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpoint]);

      relay = startRelayProcess(env);
      const started = relay;
      // The quiet events go at once; then both lanes' statements wait on the lock.
      const waiting = await waitUntil(
        async () => {
          if (!started.running())
            throw new Error(`the relay process ended: ${await started.exited}\n${started.output()}`);
          const { rows } = await sql.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%claimed%'
             ORDER BY pid`,
          );
          return rows.length === 2 && rows;
        },
        { timeoutMs: 20_000, what: () => `both relay lanes waiting on the lock\n${started.output()}` },
      );
      await sql.query('SELECT pg_terminate_backend($1)', [waiting[0]!.pid]);
      // The other lane still waits on the lock, with this one's failure already in.
      await waitUntil(
        async () => {
          const { rows } = await sql.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [waiting[0]!.pid]);
          return rows.length === 0;
        },
        { timeoutMs: 10_000, what: 'the terminated backend gone' },
      );
      await sleep(300);
      expect(`${started.running()}\n${started.output()}`).toMatch(/^true\n/);

      await locker.query('ROLLBACK');
      await waitUntil(
        async () => {
          if (!started.running())
            throw new Error(`the relay process ended: ${await started.exited}\n${started.output()}`);
          const { rows } = await sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM events WHERE relayed_at IS NULL`,
          );
          return rows[0]!.n === 0;
        },
        { timeoutMs: 30_000, what: () => `every event relayed\n${started.output()}` },
      );
      const deliveries = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries`);
      expect(deliveries.rows[0]!.n).toBe(LOCKED_EVENTS);
      await waitUntil(() => started.lines().some((line) => line.msg === 'outbox relay failed; will retry'), {
        timeoutMs: 10_000,
        what: () => `the failed drain logged\n${started.output()}`,
      });
      const errors = started.lines().filter((line) => line.level >= 50);
      expect(errors.map((line) => line.msg)).toEqual(['outbox relay failed; will retry']);
      expect(errors[0]!.err?.message).toMatch(/terminat/);

      started.stop();
      expect(`${await started.exited}\n${started.output()}`).toMatch(/^exit 0\n/);
    } finally {
      if (relay?.running()) {
        relay.kill();
        await relay.exited;
      }
      await locker?.query('ROLLBACK').catch(() => undefined);
      locker?.release();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await Promise.allSettled([sql.end(), connection.quit()]);
      await isolated.drop();
    }
  }, 90_000);
});
