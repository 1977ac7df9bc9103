import path from 'node:path';
import { createPgPool, type PgPool } from '@booking/db';
import { SUBSCRIBABLE_EVENTS } from '@booking/events';
import { createIsolatedDatabase, createTestApp, seedTenant, sleep, waitUntil, type TestApp } from '@booking/test-kit';
import { createDeliveryQueue, queueConnection, type DeliveryQueue } from '@booking/webhook-queue';
import pino from 'pino';
import { startOutboxRelay } from '../src/relay/outbox-relay';
import { relayBatch } from '../src/relay/relay-outbox';
import { startRelayProcess } from './support/relay-child';

// The relay's index keeps an entry for every event relayed since the table was last vacuumed,
// ahead of the waiting events, so a drain reads only from a bound: LATE_COMMIT_MS before the
// start of the last drain that ended well, and every FULL_DRAIN_EVERY_MS the whole outbox. Here
// both are shortened. Real PostgreSQL (a database of its own, autovacuum off for its events, as
// between two runs of autovacuum) and Redis (a queue prefix of its own; no endpoint, so nothing
// is queued).

const LATE_COMMIT_MS = 5_000;
const FULL_DRAIN_EVERY_MS = 10_000;

const INDEX = 'events_relayed_at_created_at_idx';

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Shared Hit Blocks': number;
  Plans?: PlanNode[];
}

function findNode(node: PlanNode, match: (node: PlanNode) => boolean): PlanNode | undefined {
  if (match(node)) return node;
  for (const child of node.Plans ?? []) {
    const found = findNode(child, match);
    if (found) return found;
  }
  return undefined;
}

describe('the outbox relay reading from a bound', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;
  let sql: PgPool;
  let connection: ReturnType<typeof queueConnection>;
  let queue: DeliveryQueue;
  let tenantId: string;
  let stop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    t = createTestApp(isolated.env);
    sql = createPgPool(isolated.env.DATABASE_URL!, { poolSize: 4 });
    connection = queueConnection(t.deps.config.redisUrl);
    queue = createDeliveryQueue(connection, isolated.env.QUEUE_PREFIX!);
    tenantId = (await seedTenant(t.deps)).tenant.id;
    await sql.query('ALTER TABLE events SET (autovacuum_enabled = false)');
  });
  afterEach(async () => {
    await stop?.();
    stop = undefined;
  });
  afterAll(async () => {
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    await Promise.allSettled([sql?.end(), connection?.quit()]);
    await t?.close();
    await isolated?.drop();
  });

  /** Inserts an event through `client` (default: committed at once) created at `createdAt` (SQL). */
  const insertEvent = async (client: Pick<PgPool, 'query'> = sql, createdAt = 'now()') => {
    const { rows } = await client.query<{ id: string }>(
      `INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data, created_at)
       VALUES (gen_random_uuid(), $1, 'booking.created', 'booking', gen_random_uuid(), 1, '{}'::jsonb, ${createdAt})
       RETURNING id`,
      [tenantId],
    );
    return rows[0]!.id;
  };
  const relayedAt = async (id: string) =>
    (await sql.query<{ relayed_at: Date | null }>('SELECT relayed_at FROM events WHERE id = $1', [id])).rows[0]!
      .relayed_at;
  const untilRelayed = (id: string, timeoutMs = 5_000) =>
    waitUntil(() => relayedAt(id), { timeoutMs, intervalMs: 20, what: `event ${id} relayed` });

  const startRelay = () => {
    stop = startOutboxRelay({
      sql,
      queue,
      retryDelaysMs: [0],
      intervalMs: 50,
      logger: pino({ level: 'silent' }),
      lateCommitMs: LATE_COMMIT_MS,
      fullDrainEveryMs: FULL_DRAIN_EVERY_MS,
    });
  };

  it('when a transaction created its event before several drains and commits later, within the late-commit time, then the next drain relays it', async () => {
    startRelay();
    // The first drain, unbounded, has ended well once this is relayed.
    await untilRelayed(await insertEvent());
    const late = await sql.connect();
    try {
      await late.query('BEGIN');
      const id = await insertEvent(late); // created_at: the transaction's start
      // Drains that start after the event was created, and end well, while it is not committed.
      await sleep(LATE_COMMIT_MS / 2);
      await untilRelayed(await insertEvent());
      await late.query('COMMIT');
      const committed = Date.now();
      await untilRelayed(id, FULL_DRAIN_EVERY_MS);
      // A bounded drain took it (polls run every 50 ms), not the next unbounded one.
      expect(Date.now() - committed).toBeLessThan(FULL_DRAIN_EVERY_MS / 2);
    } finally {
      await late.query('ROLLBACK').catch(() => undefined);
      late.release();
    }
  });

  it('when an event older than the bound commits, then bounded drains pass it by and the next unbounded drain relays it', async () => {
    startRelay();
    const startedAt = Date.now();
    await untilRelayed(await insertEvent());
    // The first, unbounded drain is behind us; the next one is FULL_DRAIN_EVERY_MS after it.
    const id = await insertEvent(sql, "now() - interval '1 hour'");
    await sleep(FULL_DRAIN_EVERY_MS / 4);
    // Unless this machine stalled past the next unbounded drain (a second of slack).
    if (Date.now() - startedAt < FULL_DRAIN_EVERY_MS - 1_000) expect(await relayedAt(id)).toBeNull();
    await untilRelayed(id, 2 * FULL_DRAIN_EVERY_MS);
  }, 45_000);

  it("when the dispatcher's clock runs ten minutes ahead of PostgreSQL's, then the next drain still relays a new event", async () => {
    // A relay process of its own, with the default margin (a minute) and unbounded drain (a minute).
    const relay = startRelayProcess({
      ...isolated.env,
      WEBHOOK_RELAY_INTERVAL_MS: '50',
      NODE_OPTIONS: `--require ${path.join(__dirname, 'support', 'clock-ahead.cjs')}`,
      CLOCK_AHEAD_MS: String(10 * 60_000),
    });
    try {
      // Relayed by the first drain, unbounded; the bound stands from then on.
      await untilRelayed(await insertEvent(), 30_000);
      const id = await insertEvent();
      const committed = Date.now();
      // A bound taken from the dispatcher's clock would pass it by until the next unbounded drain.
      await untilRelayed(id, 20_000);
      expect(Date.now() - committed).toBeLessThan(10_000);
    } finally {
      relay.stop();
      await relay.exited;
    }
  }, 60_000);

  it('when many relayed events are not yet vacuumed, then a bounded claim reads a few index pages and an unbounded one reads all of them', async () => {
    // 20,000 events of an hour ago, relayed and not vacuumed: their dead entries wait in the index.
    await sql.query(
      `INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data, created_at)
       SELECT gen_random_uuid(), $1, 'booking.created', 'booking', gen_random_uuid(), 1, '{}'::jsonb,
              now() - interval '1 hour' + make_interval(secs => n / 100.0)
       FROM generate_series(1, 20000) AS n`,
      [tenantId],
    );
    await sql.query('UPDATE events SET relayed_at = now() WHERE relayed_at IS NULL');
    await sql.query('ANALYZE events'); // as autovacuum's ANALYZE would
    // The relay's statements are prepared (named): PostgreSQL plans them for their values at
    // first, then maybe generically. Both plans, for both statements (traced or not).
    const pagesRead = async (mode: string, traced: boolean, createdFrom: string) => {
      const client = await sql.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
        await client.query(`PREPARE claim(int, text[], timestamptz) AS ${relayBatch(traced).text}`);
        const execute = `EXECUTE claim(1000, ${client.escapeLiteral(`{${SUBSCRIBABLE_EVENTS.join(',')}}`)}, ${client.escapeLiteral(createdFrom)})`;
        // Twice: the first scan marks the dead entries it meets, as the relay's polls do.
        await client.query(execute);
        const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${execute}`,
        );
        const scan = findNode(rows[0]!['QUERY PLAN'][0].Plan, (node) => node['Index Name'] === INDEX);
        // An index scan, which marks the dead entries it meets (a bitmap scan never does).
        expect(scan?.['Node Type']).toBe('Index Scan');
        expect(scan?.['Index Cond']).toContain('created_at >=');
        return scan!['Shared Hit Blocks'];
      } finally {
        try {
          await client.query('ROLLBACK');
          await client.query('DEALLOCATE claim');
        } finally {
          client.release();
        }
      }
    };
    for (const mode of ['force_custom_plan', 'force_generic_plan'])
      for (const traced of [false, true]) {
        const bounded = await pagesRead(mode, traced, new Date(Date.now() - 60_000).toISOString());
        const unbounded = await pagesRead(mode, traced, '-infinity');
        expect(bounded).toBeLessThan(20);
        expect(unbounded).toBeGreaterThan(50);
      }
  });
});
