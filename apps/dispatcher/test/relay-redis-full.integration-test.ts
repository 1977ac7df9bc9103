import { loadConfig } from '@booking/config';
import { createPgPool, createPrismaClient } from '@booking/db';
import { createIsolatedDatabase, startRedisServer, waitUntil } from '@booking/test-kit';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import { Redis } from 'ioredis';
import { sweepUnqueued } from '../src/maintenance/sweep-unqueued';
import { startRelayProcess, type RelayChild } from './support/relay-child';

// A Redis that refuses writes (maxmemory reached under noeviction) while the relay drains more
// than one batch: each batch's jobs fail to queue while the next batch is relayed. That failure
// used to be an unhandled rejection, which ends a Node 20 process (found by review); the relay
// must log it and go on, the deliveries being committed for the sweeper to queue. The relay runs
// as its own OS process (support/relay-process.ts) under Node's default unhandled-rejection mode:
// inside Jest, whose test `process` is a copy that never hears the real one's
// 'unhandledRejection', and which forgets a rejection handled later, the defect would not show.
// The Redis is this test's own redis-server on 127.0.0.1, the database an isolated one.

const EVENTS = 3_000; // three relay batches of 1,000
const FILL_VALUE = 'x'.repeat(16 * 1024);
const MAX_FILL_WRITES = 1_000; // 16 MB at most, far past the 2 MB cap

/** Writes to `redis` until it answers OOM; returns that error message. */
async function fillUntilRefused(redis: Redis): Promise<string> {
  for (let i = 0; i < MAX_FILL_WRITES; i += 1) {
    try {
      await redis.set(`fill:${i}`, FILL_VALUE);
    } catch (error) {
      return (error as Error).message;
    }
  }
  throw new Error(`redis still accepted writes after ${MAX_FILL_WRITES} of them`);
}

describe('the outbox relay when Redis refuses writes', () => {
  it('when queuing a relayed batch fails while the next is relayed, then it is logged, the deliveries stay committed, the process goes on, and the sweeper queues them once Redis has room', async () => {
    const redisServer = await startRedisServer();
    const isolated = await createIsolatedDatabase();
    const env = {
      ...isolated.env,
      REDIS_URL: redisServer.url,
      WEBHOOK_RETRY_DELAYS_MS: '0',
      WEBHOOK_RELAY_INTERVAL_MS: '60000', // one drain, at start; no second pass during the test
    };
    const config = loadConfig({ ...process.env, ...env });
    const admin = new Redis(redisServer.url, { lazyConnect: true });
    const connection = queueConnection(redisServer.url);
    const queue = createDeliveryQueue(connection, config.queuePrefix);
    const sql = createPgPool(config.databaseUrl, { poolSize: config.dbPoolSize, ...config.dbTimeouts });
    const db = createPrismaClient(config.databaseUrl, { poolSize: 2 });
    let relay: RelayChild | undefined;
    try {
      await admin.connect();
      await admin.config('SET', 'maxmemory', '2mb');
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      expect(await fillUntilRefused(admin)).toMatch(/^OOM/);

      const [{ id: tenantId }] = (
        await sql.query<{ id: string }>(
          `INSERT INTO tenants (id, slug, name) VALUES (gen_random_uuid(), 'relay-redis-full', 'Relay test venue') RETURNING id`,
        )
      ).rows as [{ id: string }];
      await sql.query(
        `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret_ciphertext, updated_at)
         VALUES (gen_random_uuid(), $1, 'https://receiver.test/hook', '{booking.created}', 'not-used-here', now())`,
        [tenantId],
      );
      // The relay reads only an event's tenant and name; the payload does not matter here.
      await sql.query(
        `INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data, created_at)
         SELECT gen_random_uuid(), $1, 'booking.created', 'booking', gen_random_uuid(), 1, '{}'::jsonb,
                now() + make_interval(secs => n / 1000.0)
         FROM generate_series(1, $2::int) AS n`,
        [tenantId, EVENTS],
      );

      relay = startRelayProcess(env);
      const started = relay;
      // Every batch committed; SIGTERM then stops the relay, which waits for each batch's queuing.
      await waitUntil(
        async () => {
          if (!started.running())
            throw new Error(`the relay process ended: ${await started.exited}\n${started.output()}`);
          const { rows } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries`);
          return rows[0]?.n === EVENTS;
        },
        { timeoutMs: 30_000, what: () => `${EVENTS} deliveries written by the relay\n${started.output()}` },
      );
      started.stop();
      expect(`${await started.exited}\n${started.output()}`).toMatch(/^exit 0\n/);

      // One error per batch, each naming Redis's refusal (the err also holds the whole script).
      const errors = started.lines().filter((line) => line.level >= 50);
      expect(errors.map((entry) => entry.msg)).toEqual(
        Array(EVENTS / 1_000).fill('relayed deliveries not queued; the sweeper will queue them'),
      );
      for (const entry of errors) expect(entry.err?.message).toMatch(/^OOM command not allowed/);
      const counts = await sql.query<{ unrelayed: number; deliveries: number; pending: number }>(
        `SELECT (SELECT count(*) FROM events WHERE relayed_at IS NULL)::int AS unrelayed,
                (SELECT count(*) FROM webhook_deliveries)::int AS deliveries,
                (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS pending`,
      );
      expect(counts.rows[0]).toEqual({ unrelayed: 0, deliveries: EVENTS, pending: EVENTS });

      // Redis freed (this test's own server) and given room again: a sweep queues committed
      // deliveries that have no job (one sweep takes the oldest of them, up to its batch size).
      await admin.flushall();
      await admin.config('SET', 'maxmemory', '0');
      const swept = await sweepUnqueued(db, queue, [0], 0);
      expect(swept).toBeGreaterThan(0);
      expect(await queue.count()).toBe(swept);
    } finally {
      if (relay?.running()) {
        relay.kill();
        await relay.exited;
      }
      await queue.close();
      await Promise.allSettled([sql.end(), db.$disconnect(), connection.quit(), admin.quit()]);
      await redisServer.kill();
      await isolated.drop();
    }
  }, 90_000);
});
