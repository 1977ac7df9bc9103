import { randomUUID } from 'node:crypto';
import { loadConfig } from '@booking/config';
import { createPgPool } from '@booking/db';
import { createIsolatedDatabase, waitUntil } from '@booking/test-kit';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import { startRelayProcess, type RelayChild } from './support/relay-child';

// A drain's second lane starts from inside the first, once a batch came back full. If it fails
// while the first still runs, its rejection must be handled, or Node ends the dispatcher
// (found by review). Here both lanes' statements wait on a row lock this test holds (the
// endpoint's, which each new delivery's foreign key must share), the second lane's backend is
// terminated for real, and the relay, its own OS process under Node's default
// unhandled-rejection mode (support/relay-child.ts), must log it, relay everything once the lock
// is released, and go on. Real PostgreSQL (a database of its own) and Redis (a prefix of its own).

const QUIET_EVENTS = 1_000; // a first batch, full, of a tenant with no endpoint: no deliveries, no lock
const LOCKED_EVENTS = 2_500; // then events of a tenant whose only endpoint this test locks

describe('the outbox relay when its second lane fails while the first still runs', () => {
  it('when the second lane’s connection is terminated, then the process lives on, logs the failure once, and every event is relayed', async () => {
    const isolated = await createIsolatedDatabase();
    const prefix = `relay-lanes-${randomUUID()}`;
    const env = {
      ...isolated.env,
      QUEUE_PREFIX: prefix,
      WEBHOOK_RETRY_DELAYS_MS: '0',
      WEBHOOK_RELAY_INTERVAL_MS: '60000',
    };
    const config = loadConfig({ ...process.env, ...env });
    const sql = createPgPool(config.databaseUrl, { poolSize: 3 });
    const locker = await sql.connect();
    const connection = queueConnection(config.redisUrl);
    const queue = createDeliveryQueue(connection, prefix);
    let relay: RelayChild | undefined;
    try {
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
      // Both lanes' statements wait on the lock. The second lane took the connection the first
      // batch left idle, so its statement began first; the first lane's opened a new one.
      const waiting = await waitUntil(
        async () => {
          if (!started.running())
            throw new Error(`the relay process ended: ${await started.exited}\n${started.output()}`);
          const { rows } = await sql.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%claimed%'
             ORDER BY query_start`,
          );
          return rows.length === 2 && rows;
        },
        { timeoutMs: 20_000, what: () => `both relay lanes waiting on the lock\n${started.output()}` },
      );
      await sql.query('SELECT pg_terminate_backend($1)', [waiting[0]!.pid]);
      // The first lane still waits on the lock, with the second lane's failure already in.
      await waitUntil(
        async () => {
          const { rows } = await sql.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [waiting[0]!.pid]);
          return rows.length === 0;
        },
        { timeoutMs: 10_000, what: 'the second lane’s backend gone' },
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
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
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
      await queue.obliterate({ force: true });
      await queue.close();
      await Promise.allSettled([sql.end(), connection.quit()]);
      await isolated.drop();
    }
  }, 90_000);
});
