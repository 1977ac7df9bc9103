import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Db } from '@booking/db';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import { spawnNode, untilReady, type Child } from './children';
import type { Checkout } from './checkout';
import { freePort, sleep } from '@booking/test-kit';
import { REDIS_URL } from './env';
import { percentile } from './load';
import type { Receiver } from './receiver';

/** Deliveries each dispatcher process (and the BullMQ ceilings) sends at once. */
export const WEBHOOK_CONCURRENCY = 50;
// Every wait is bounded; a run that does not finish in time is reported with what was missing.
const ARRIVAL_TIMEOUT_MS = 60_000;

/** A checkout's outbox database with one tenant whose one endpoint is the bench's receiver. */
export interface Outbox {
  checkout: Checkout;
  databaseUrl: string;
  db: Db;
  tenantId: string;
  secretKey: string;
  queuePrefix: string;
}

/**
 * Migrates the checkout's database and subscribes the receiver to booking.created for a new
 * tenant, or for `tenantId` (the soak's bookings). The outbox and webhook tables are emptied
 * first: the database is the bench's own.
 */
export async function prepareOutbox(
  checkout: Checkout,
  databaseUrl: string,
  receiver: Receiver,
  tenantId?: string,
): Promise<Outbox> {
  await checkout.db.applyMigrations(databaseUrl);
  const db = checkout.db.createPrismaClient(databaseUrl, { poolSize: 4 });
  // TRUNCATE waits for every lock on the tables; a deadlock with whatever else touches them is tried again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await db.$executeRawUnsafe('TRUNCATE webhook_attempts, webhook_deliveries, webhook_endpoints, events CASCADE');
      break;
    } catch (error) {
      if (attempt === 3) throw error;
      await sleep(1_000);
    }
  }
  const secretKey = randomBytes(32).toString('hex');
  const queuePrefix = `bench-webhooks-${checkout.label}-${randomBytes(4).toString('hex')}`;
  const outbox = { checkout, databaseUrl, db, tenantId: tenantId ?? (await addTenant(db)), secretKey, queuePrefix };
  await subscribe(outbox, outbox.tenantId, receiver);
  return outbox;
}

/** A new tenant in an outbox's database, subscribed to nothing yet; its id. */
export async function addTenant(db: Db): Promise<string> {
  const slug = `bench-webhooks-${randomBytes(4).toString('hex')}`;
  return (await db.tenant.create({ data: { slug, name: 'Webhook bench' } })).id;
}

/** Subscribes `receiver` to the booking.created events of `tenantId`, with an endpoint of its own. */
export async function subscribe(outbox: Outbox, tenantId: string, receiver: Receiver): Promise<void> {
  const { signing } = outbox.checkout;
  await outbox.db.webhookEndpoint.create({
    data: {
      tenantId,
      url: receiver.url,
      events: ['booking.created'],
      secretCiphertext: signing.sealSecret(outbox.secretKey, signing.generateWebhookSecret()),
    },
  });
}

/** Removes the outbox's queue from Redis and closes its connections: the end of a run. */
export async function removeOutbox(outbox: Outbox): Promise<void> {
  const connection = queueConnection(REDIS_URL);
  const queue = createDeliveryQueue(connection, outbox.queuePrefix);
  try {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
  } finally {
    await Promise.all([connection.quit(), outbox.db.$disconnect()]);
  }
}

/**
 * The checkout's dispatcher process (its own `apps/dispatcher/src/main.ts`), pinned to `core` if
 * given, working on `concurrency` deliveries at once (WEBHOOK_CONCURRENCY), of which it sends at
 * most `perEndpoint` at once to the one endpoint (WEBHOOK_ENDPOINT_CONCURRENCY; by default as
 * many, no bound, since the BullMQ + POST ceiling has none).
 */
export async function startDispatcher(
  outbox: Outbox,
  name: string,
  {
    core,
    concurrency = WEBHOOK_CONCURRENCY,
    perEndpoint = concurrency,
  }: { core?: number; concurrency?: number; perEndpoint?: number } = {},
): Promise<Child> {
  const metricsPort = await freePort();
  const child = spawnNode(
    name,
    outbox.checkout.root,
    ['apps/dispatcher/src/main.ts'],
    {
      NODE_ENV: 'production',
      TOKEN_SIGNING_SECRET: randomBytes(32).toString('hex'),
      WEBHOOK_SECRET_KEY: outbox.secretKey,
      DATABASE_URL: outbox.databaseUrl,
      REDIS_URL,
      QUEUE_PREFIX: outbox.queuePrefix,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_CONCURRENCY: String(concurrency),
      WEBHOOK_ENDPOINT_CONCURRENCY: String(perEndpoint),
      LOG_LEVEL: 'warn',
      METRICS_PORT: String(metricsPort),
    },
    core,
  );
  child.metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  await untilReady(child, `http://127.0.0.1:${metricsPort}/healthz`, 30_000);
  return child;
}

function bookingCreated(tenantId: string) {
  const bookingId = randomUUID();
  return {
    tenantId,
    name: 'booking.created' as const,
    entityType: 'booking' as const,
    entityId: bookingId,
    fields: {
      booking_id: bookingId,
      experience_id: randomUUID(),
      venue_id: randomUUID(),
      slot_id: randomUUID(),
      customer_email: `bench-${bookingId.slice(0, 8)}@example.com`,
      guest_count: 2,
    },
  };
}

/**
 * Commits `count` events with the checkout's recordEvent in one transaction, so they all reach
 * the relay at the same instant (written before the commit: the writer does not pace the run).
 * Returns the commit time (performance.now()) of each event.
 */
export async function writeBurst(outbox: Outbox, count: number): Promise<Map<string, number>> {
  const { recordEvent } = outbox.checkout.events;
  const ids = await outbox.db.$transaction(
    async (tx) => {
      const made: string[] = [];
      for (let i = 0; i < count; i += 1) made.push(await recordEvent(tx, bookingCreated(outbox.tenantId)));
      return made;
    },
    { timeout: ARRIVAL_TIMEOUT_MS, maxWait: 5_000 },
  );
  const at = performance.now();
  return new Map(ids.map((id) => [id, at] as const));
}

export async function awaitArrivals(receiver: Receiver, commits: Map<string, number>): Promise<void> {
  const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
  const arrived = () => {
    let n = 0;
    for (const id of commits.keys()) if (receiver.arrivals.has(id)) n += 1;
    return n;
  };
  while (arrived() < commits.size && Date.now() < deadline) await sleep(20);
}

/**
 * Waits until the dispatchers have recorded every delivery of `commits` as succeeded (their
 * bookkeeping after the POST), bounded like the arrivals: so the next round starts on an idle
 * machine and a round's CPU includes that work. Returns how many are recorded.
 */
export async function awaitSettled(outbox: Outbox, commits: Map<string, number>): Promise<number> {
  const eventIds = [...commits.keys()];
  const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
  let settled = 0;
  while (Date.now() < deadline) {
    const [row] = await outbox.db.$queryRaw<{ settled: number }[]>`
      SELECT count(*)::int AS settled FROM webhook_deliveries
      WHERE event_id = ANY(${eventIds}::uuid[]) AND status = 'succeeded'`;
    settled = row?.settled ?? 0;
    if (settled >= eventIds.length) break;
    await sleep(20);
  }
  return settled;
}

export interface Burst {
  events: number;
  missing: number;
  /** Deliveries that arrived. */
  delivered: number;
  /** From the first commit to the last arrival (NaN when nothing arrived). */
  seconds: number;
  /** Commit to arrival at the receiver. */
  p50: number;
  p99: number;
  repeats: number;
  /** p50 / p99 ms of each stage, from the rows' own timestamps. */
  relay: [number, number];
  queue: [number, number];
  attempt: [number, number];
}

/**
 * The deliveries of `commits` as the receiver saw them, and the stages from the database:
 * relay = commit -> the event's relayed_at (the relay's next poll, its transaction); queue = relayed_at
 * -> the first attempt's started_at (enqueue, BullMQ hand-over, reading the delivery); attempt =
 * its duration_ms (the POST).
 */
export async function summariseBurst(outbox: Outbox, receiver: Receiver, commits: Map<string, number>): Promise<Burst> {
  const latencies: number[] = [];
  let firstCommit = Infinity;
  let lastArrival = 0;
  for (const [id, committedAt] of commits) {
    firstCommit = Math.min(firstCommit, committedAt);
    const at = receiver.arrivals.get(id);
    if (at === undefined) continue;
    latencies.push(at - committedAt);
    lastArrival = Math.max(lastArrival, at);
  }
  latencies.sort((x, y) => x - y);
  const eventIds = [...commits.keys()];
  // Wall-clock commit times, to compare with the database's timestamps (same machine, same clock).
  const committedMs = [...commits.values()].map((at) => performance.timeOrigin + at);
  const [row] = await outbox.db.$queryRaw<Record<string, number | null>[]>`
    SELECT
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.relayed_at) * 1000 - c.committed_ms) AS relay50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM e.relayed_at) * 1000 - c.committed_ms) AS relay99,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - e.relayed_at) * 1000) AS queue50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - e.relayed_at) * 1000) AS queue99,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS attempt50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms) AS attempt99
    FROM unnest(${eventIds}::uuid[], ${committedMs}::float8[]) AS c(event_id, committed_ms)
    JOIN events e ON e.id = c.event_id
    JOIN webhook_deliveries d ON d.event_id = e.id
    JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt_number = 1`;
  const n = (value: number | null | undefined) => (value === null || value === undefined ? NaN : Number(value));
  const deliveryIds = await outbox.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM webhook_deliveries WHERE event_id = ANY(${eventIds}::uuid[])`;
  return {
    events: commits.size,
    missing: commits.size - latencies.length,
    delivered: latencies.length,
    seconds: latencies.length > 0 ? (lastArrival - firstCommit) / 1000 : NaN,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    repeats: deliveryIds.reduce((sum, d) => sum + Math.max(0, (receiver.receipts.get(d.id) ?? 0) - 1), 0),
    relay: [n(row?.relay50), n(row?.relay99)],
    queue: [n(row?.queue50), n(row?.queue99)],
    attempt: [n(row?.attempt50), n(row?.attempt99)],
  };
}
