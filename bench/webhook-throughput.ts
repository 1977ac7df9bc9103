/**
 * Webhook delivery throughput and latency on loopback: `pnpm bench:webhooks`.
 *
 * Runs the dispatcher as 1, then 2 child processes (`node --import tsx apps/dispatcher/src/main.ts`,
 * WEBHOOK_CONCURRENCY=50, LOG_LEVEL=warn, otherwise the default settings) against its own database
 * and queue prefix, with one tenant whose one endpoint (subscribed to booking.created) is a
 * node:http receiver in this process on 127.0.0.1 that answers 200 at once and notes when each
 * delivery arrived. Events are written to the outbox with `recordEvent`, in transactions, as the
 * API does; each event's commit time is noted when its transaction returns.
 *
 * Scenarios:
 *   (a)  baseline: a bare BullMQ Worker (concurrency 50, in a child process: this file run with
 *        --baseline-worker) taking no-op jobs, queued in batches of 200 with the dispatcher's own
 *        job options; jobs/s from the first add to the last completion
 *   (a') the same, each job making one HTTP POST to the receiver (a new connection, as the
 *        dispatcher does): BullMQ + HTTP without PostgreSQL
 *   (b)  burst: EVENTS events committed in one transaction (written before the commit, so the
 *        writer does not pace the run); deliveries/s = deliveries / (last arrival - commit).
 *        Its latencies are mostly queueing.
 *   (c)  paced: PACED_RATE events/s for PACED_SECONDS s, one per transaction: commit-to-receiver
 *        latency (arrival at the receiver minus the event's commit) when queueing does not dominate
 * (b) and (c) run with 1 dispatcher process, then with 2, each after a warm-up of WARMUP_EVENTS.
 * For them a second table splits the latency by stage, from the rows' own timestamps.
 * Everything shares one machine (PostgreSQL, Redis, dispatchers, receiver), so the figures are
 * relative, not capacity planning.
 *
 * Environment: DATABASE_URL names the PostgreSQL server (default 127.0.0.1:5432, user postgres);
 * the bench always uses the database `booking_bench_webhooks` on it, created and migrated if
 * needed, and empties its events and webhook tables first. REDIS_URL (default
 * redis://127.0.0.1:6379); the queue prefix is new every run and removed at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { applyMigrations, createPrismaClient, type Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { createDeliveryQueue, DELIVERY_QUEUE, enqueueDeliveries, queueConnection } from '@booking/webhook-queue';

const ROOT = path.resolve(__dirname, '..');
const DATABASE_URL = (() => {
  const url = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking');
  url.pathname = '/booking_bench_webhooks';
  return url.toString();
})();
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const CONCURRENCY = 50;
const EVENTS = 3000;
const WARMUP_EVENTS = 300;
const BASELINE_JOBS = 10_000;
const BASELINE_POST_JOBS = 3000;
const ENQUEUE_BATCH = 200; // the relay's batch
const PACED_RATE = 100;
const PACED_SECONDS = 10;
// Every wait is bounded; a run that does not finish in time is reported with what was missing.
const RUN_TIMEOUT_MS = 45_000;
const READY_TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The baseline worker (child process): a bare BullMQ Worker, no-op jobs or one POST each.

/** The little of BullMQ's Worker the baseline uses; bullmq is a dependency of the workspace packages. */
interface MiniWorker {
  on(event: 'completed', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
}
type WorkerClass = new (
  name: string,
  processor: (job: { id?: string }) => Promise<void>,
  options: { connection: unknown; prefix: string; concurrency: number },
) => MiniWorker;

function postOnce(url: string, id: string): Promise<void> {
  const body = JSON.stringify({ id });
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'x-service-delivery-id': id,
        },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function baselineWorker(): Promise<void> {
  const { Worker } = createRequire(path.join(ROOT, 'packages/webhook-queue/package.json'))('bullmq') as {
    Worker: WorkerClass;
  };
  const expected = Number(process.env.BENCH_JOBS);
  const target = process.env.BENCH_POST_URL;
  const connection = queueConnection(REDIS_URL);
  let completed = 0;
  let last = 0;
  const worker = new Worker(
    DELIVERY_QUEUE,
    async (job) => {
      if (target) await postOnce(target, job.id ?? '');
    },
    { connection, prefix: process.env.QUEUE_PREFIX ?? '', concurrency: CONCURRENCY },
  );
  worker.on('error', (error) => console.error(`worker error: ${error.message}`));
  worker.on('completed', () => {
    completed += 1;
    last = Date.now();
    if (completed === expected) console.log(JSON.stringify({ done: completed, last }));
  });
  await worker.waitUntilReady();
  console.log('ready');
  process.once('SIGTERM', () => {
    void worker.close().finally(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------
// Child processes.

interface Child {
  name: string;
  child: ChildProcess;
  output: string[];
  lines: number;
  /** stdout lines not yet consumed by `nextLine`. */
  pending: string[];
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const children = new Set<Child>();

function spawnChild(name: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const handle: Child = { name, child, output: [], lines: 0, pending: [] };
  const keep = (stdout: boolean) => (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      if (stdout) handle.pending.push(line);
      handle.lines += 1;
      handle.output.push(line.slice(0, 300));
      if (handle.output.length > 5) handle.output.shift();
    }
  };
  child.stdout!.on('data', keep(true));
  child.stderr!.on('data', keep(false));
  children.add(handle);
  return handle;
}

/** The next stdout line matching `test`, within `timeoutMs`. */
async function nextLine(handle: Child, test: (line: string) => boolean, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const index = handle.pending.findIndex(test);
    if (index >= 0) return handle.pending.splice(0, index + 1).at(-1)!;
    if (handle.child.exitCode !== null)
      throw new Error(`${handle.name} exited with ${handle.child.exitCode}:\n${handle.output.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${handle.name}: no expected output within ${timeoutMs} ms`);
    await sleep(10);
  }
}

async function stopChild(handle: Child): Promise<void> {
  children.delete(handle);
  if (handle.child.exitCode !== null || handle.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => handle.child.once('exit', () => resolve()));
  handle.child.kill('SIGTERM');
  const timer = setTimeout(() => handle.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
  if (handle.lines > 0 && handle.name.startsWith('dispatcher')) {
    process.stderr.write(`${handle.name} printed ${handle.lines} line(s); last: ${handle.output.at(-1)}\n`);
  }
}

const SECRETS = { WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex') };

async function startDispatcher(name: string, queuePrefix: string): Promise<Child> {
  const metricsPort = await freePort();
  const handle = spawnChild(name, [path.join('apps', 'dispatcher', 'src', 'main.ts')], {
    NODE_ENV: 'production',
    TOKEN_SIGNING_SECRET: randomBytes(32).toString('hex'),
    WEBHOOK_SECRET_KEY: SECRETS.WEBHOOK_SECRET_KEY,
    DATABASE_URL,
    REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    LOG_LEVEL: 'warn',
    METRICS_PORT: String(metricsPort),
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (handle.child.exitCode !== null)
      throw new Error(`${name} exited with ${handle.child.exitCode}:\n${handle.output.join('\n')}`);
    if (Date.now() > deadline) {
      await stopChild(handle);
      throw new Error(`${name} was not ready within ${READY_TIMEOUT_MS} ms:\n${handle.output.join('\n')}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return handle;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------
// The receiver (this process).

interface Receiver {
  url: string;
  /** First arrival (performance.now()) by event id, for dispatcher deliveries. */
  arrivals: Map<string, number>;
  /** Requests by delivery id, to spot repeats. */
  receipts: Map<string, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const receipts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const deliveryId = String(req.headers['x-service-delivery-id'] ?? '');
    receipts.set(deliveryId, (receipts.get(deliveryId) ?? 0) + 1);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { event_id?: string } };
        const eventId = body.data?.event_id;
        if (eventId && !arrivals.has(eventId)) arrivals.set(eventId, at);
      } catch {
        // not a delivery
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    receipts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Measurements.

interface Measured {
  scenario: string;
  processes: number;
  items: number;
  /** Of `items`, how many did not arrive / complete within the time limit. */
  missing: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** Requests beyond the first per delivery id. */
  repeats: number;
  failedAttempts: number;
  /** Dispatcher runs: where the time went, from the database's timestamps (p50, p99 ms). */
  stages?: Stages;
}

interface Stages {
  /** Event committed -> relayed (its deliveries committed): NOTIFY, the relay's transaction. */
  outbox: [number, number];
  /** Relayed -> first attempt started: enqueue, BullMQ hand-over, reading the delivery. */
  queue: [number, number];
  /** The attempt itself: connect, POST, response. */
  attempt: [number, number];
}

/**
 * Stage times of the deliveries of `commits` (event id -> commit time, performance.now()), from
 * the events' relayed_at and the first attempts' started_at and duration.
 */
async function stages(db: Db, commits: Map<string, number>): Promise<Stages> {
  const eventIds = [...commits.keys()];
  // Wall-clock commit times, to compare with the database's timestamps (same machine, same clock).
  const committedMs = [...commits.values()].map((at) => performance.timeOrigin + at);
  const [row] = await db.$queryRaw<Record<string, number | null>[]>`
    SELECT
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.relayed_at) * 1000 - c.committed_ms) AS outbox50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM e.relayed_at) * 1000 - c.committed_ms) AS outbox99,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - e.relayed_at) * 1000) AS queue50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM a.started_at - e.relayed_at) * 1000) AS queue99,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY a.duration_ms) AS attempt50,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY a.duration_ms) AS attempt99
    FROM unnest(${eventIds}::uuid[], ${committedMs}::float8[]) AS c(event_id, committed_ms)
    JOIN events e ON e.id = c.event_id
    JOIN webhook_deliveries d ON d.event_id = e.id
    JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt_number = 1`;
  const n = (value: number | null | undefined) => (value === null || value === undefined ? NaN : Number(value));
  return {
    outbox: [n(row?.outbox50), n(row?.outbox99)],
    queue: [n(row?.queue50), n(row?.queue99)],
    attempt: [n(row?.attempt50), n(row?.attempt99)],
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
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
 * Commits `count` events in one transaction, so they all reach the relay at the same instant;
 * returns each event's commit time and how long writing them took (before the commit).
 */
async function writeBurst(db: Db, tenantId: string, count: number) {
  const started = performance.now();
  const ids = await db.$transaction(
    async (tx) => {
      const made: string[] = [];
      for (let i = 0; i < count; i += 1) made.push(await recordEvent(tx, bookingCreated(tenantId)));
      return made;
    },
    { timeout: RUN_TIMEOUT_MS, maxWait: 5_000 },
  );
  const at = performance.now();
  return { commits: new Map(ids.map((id) => [id, at] as const)), writeSeconds: (at - started) / 1000 };
}

/** One event per transaction at `rate` per second for `seconds`. */
async function writePaced(db: Db, tenantId: string, rate: number, seconds: number) {
  const commits = new Map<string, number>();
  const started = performance.now();
  const total = rate * seconds;
  for (let i = 0; i < total; i += 1) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const [id] = await db.$transaction(async (tx) => [await recordEvent(tx, bookingCreated(tenantId))]);
    commits.set(id!, performance.now());
  }
  return commits;
}

async function awaitArrivals(receiver: Receiver, commits: Map<string, number>): Promise<void> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  const arrived = () => {
    let n = 0;
    for (const id of commits.keys()) if (receiver.arrivals.has(id)) n += 1;
    return n;
  };
  while (arrived() < commits.size && Date.now() < deadline) await sleep(20);
}

async function failedAttempts(db: Db): Promise<number> {
  return db.webhookAttempt.count({ where: { succeeded: false } });
}

/** Deliveries of `commits` as the receiver saw them. */
async function summarise(
  scenario: string,
  processes: number,
  receiver: Receiver,
  commits: Map<string, number>,
  db: Db,
  failedBefore: number,
): Promise<Measured> {
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
  const seconds = (lastArrival - firstCommit) / 1000;
  const deliveries = await db.webhookDelivery.findMany({
    where: { eventId: { in: [...commits.keys()] } },
    select: { id: true },
  });
  const repeats = deliveries.reduce((sum, d) => sum + Math.max(0, (receiver.receipts.get(d.id) ?? 0) - 1), 0);
  return {
    scenario,
    processes,
    items: commits.size,
    missing: commits.size - latencies.length,
    seconds,
    perSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN,
    repeats,
    failedAttempts: (await failedAttempts(db)) - failedBefore,
    stages: await stages(db, commits),
  };
}

/** (a) and (a'): a bare BullMQ worker process taking `jobs` jobs queued from here. */
async function baseline(scenario: string, jobs: number, postUrl?: string): Promise<Measured> {
  const prefix = `bench-webhooks-baseline-${randomBytes(4).toString('hex')}`;
  const connection = queueConnection(REDIS_URL);
  const queue = createDeliveryQueue(connection, prefix);
  const worker = spawnChild('baseline worker', [path.join('bench', 'webhook-throughput.ts'), '--baseline-worker'], {
    QUEUE_PREFIX: prefix,
    BENCH_JOBS: String(jobs),
    ...(postUrl ? { BENCH_POST_URL: postUrl } : {}),
  });
  try {
    await nextLine(worker, (line) => line === 'ready', READY_TIMEOUT_MS);
    process.stderr.write(`${scenario}: ${jobs} jobs... `);
    const started = Date.now();
    for (let i = 0; i < jobs; i += ENQUEUE_BATCH) {
      const batch = Array.from({ length: Math.min(ENQUEUE_BATCH, jobs - i) }, () => ({ id: randomUUID() }));
      await enqueueDeliveries(queue, batch, [0]);
    }
    let missing = 0;
    let last = Date.now();
    try {
      const done = JSON.parse(await nextLine(worker, (line) => line.startsWith('{'), RUN_TIMEOUT_MS)) as {
        last: number;
      };
      last = done.last;
    } catch {
      const counts = await queue.getJobCounts('waiting', 'active');
      missing = (counts.waiting ?? 0) + (counts.active ?? 0);
    }
    const seconds = (last - started) / 1000;
    const measured: Measured = {
      scenario,
      processes: 1,
      items: jobs,
      missing,
      seconds,
      perSecond: (jobs - missing) / seconds,
      p50: NaN,
      p99: NaN,
      max: NaN,
      repeats: 0,
      failedAttempts: 0,
    };
    process.stderr.write(`${measured.perSecond.toFixed(0)} jobs/s\n`);
    return measured;
  } finally {
    await stopChild(worker);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
  }
}

/** (b) and (c) with the dispatcher processes already running. */
async function dispatcherRuns(
  processes: number,
  db: Db,
  tenantId: string,
  receiver: Receiver,
): Promise<{ burst: Measured; paced: Measured }> {
  const label = `${processes} dispatcher process${processes > 1 ? 'es' : ''}`;
  process.stderr.write(`${label}: warming up (${WARMUP_EVENTS} events)... `);
  const warmup = await writeBurst(db, tenantId, WARMUP_EVENTS);
  await awaitArrivals(receiver, warmup.commits);

  process.stderr.write(`burst of ${EVENTS}... `);
  let failedBefore = await failedAttempts(db);
  const { commits: burstCommits, writeSeconds } = await writeBurst(db, tenantId, EVENTS);
  await awaitArrivals(receiver, burstCommits);
  const burst = await summarise(
    `(b) burst: ${EVENTS} events committed in one transaction`,
    processes,
    receiver,
    burstCommits,
    db,
    failedBefore,
  );
  process.stderr.write(
    `written in ${writeSeconds.toFixed(1)} s, ${burst.perSecond.toFixed(0)} deliveries/s; paced ${PACED_RATE}/s for ${PACED_SECONDS} s... `,
  );

  await sleep(500);
  failedBefore = await failedAttempts(db);
  const pacedCommits = await writePaced(db, tenantId, PACED_RATE, PACED_SECONDS);
  await awaitArrivals(receiver, pacedCommits);
  const paced = await summarise(
    `(c) paced: ${PACED_RATE} events/s for ${PACED_SECONDS} s, 1 per transaction`,
    processes,
    receiver,
    pacedCommits,
    db,
    failedBefore,
  );
  process.stderr.write(`p50 ${paced.p50.toFixed(1)} ms, p99 ${paced.p99.toFixed(1)} ms\n`);
  return { burst, paced };
}

// ---------------------------------------------------------------------------------------------
// The bench.

async function prepareDatabase(receiverUrl: string): Promise<{ db: Db; tenantId: string }> {
  await applyMigrations(DATABASE_URL);
  const db = createPrismaClient(DATABASE_URL, { poolSize: 4 });
  // This database is the bench's own: start from empty outbox and webhook tables.
  await db.$executeRawUnsafe('TRUNCATE webhook_attempts, webhook_deliveries, webhook_endpoints, events CASCADE');
  const tenant = await db.tenant.create({
    data: { slug: `bench-webhooks-${randomBytes(4).toString('hex')}`, name: 'Webhook bench' },
  });
  await db.webhookEndpoint.create({
    data: {
      tenantId: tenant.id,
      url: receiverUrl,
      events: ['booking.created'],
      secretCiphertext: sealSecret(SECRETS.WEBHOOK_SECRET_KEY, generateWebhookSecret()),
    },
  });
  return { db, tenantId: tenant.id };
}

function report(results: Measured[], baselineRate: number): void {
  const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  const byName = (prefix: string, processes: number) =>
    results.find((r) => r.scenario.startsWith(prefix) && r.processes === processes);
  const burst1 = byName('(b)', 1);
  const burst2 = byName('(b)', 2);
  const lines = [
    '',
    `Loopback, 2 CPU cores shared by PostgreSQL, Redis, the dispatchers and the receiver; WEBHOOK_CONCURRENCY ${CONCURRENCY} per process, other settings default (DB_POOL_SIZE 10).`,
    'Latency = arrival at the receiver minus the commit of the event (outbox -> relay -> queue -> worker -> POST).',
    '',
    '| scenario | processes | items | missing | seconds | per second | p50 ms | p99 ms | max ms | repeats | failed attempts | vs baseline |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.scenario} | ${r.processes} | ${r.items} | ${r.missing} | ${f(r.seconds, 2)} | ${f(r.perSecond, 0)} | ${f(r.p50)} | ${f(r.p99)} | ${f(r.max)} | ${r.repeats} | ${r.failedAttempts} | ${f(r.perSecond / baselineRate, 3)} |`,
    ),
    '',
    burst1 && burst2 ? `2 processes vs 1 (burst): ${f(burst2.perSecond / burst1.perSecond, 2)}x deliveries/s.` : '',
    '',
    "Where the time goes, p50 / p99 ms (from the commit, the event's relayed_at and the first attempt row):",
    '',
    '| scenario | processes | commit -> relayed | relayed -> attempt starts | attempt (POST) |',
    '|---|---:|---:|---:|---:|',
    ...results
      .filter((r) => r.stages)
      .map(
        (r) =>
          `| ${r.scenario} | ${r.processes} | ${f(r.stages!.outbox[0])} / ${f(r.stages!.outbox[1])} | ${f(r.stages!.queue[0])} / ${f(r.stages!.queue[1])} | ${f(r.stages!.attempt[0])} / ${f(r.stages!.attempt[1])} |`,
      ),
  ];
  console.log(lines.join('\n'));
  const summary = {
    bench: 'webhook-throughput',
    concurrency: CONCURRENCY,
    baseline_jobs_per_s: Math.round(baselineRate),
    scenarios: results.map((r) => ({
      name: r.scenario,
      processes: r.processes,
      items: r.items,
      missing: r.missing,
      seconds: Number(f(r.seconds, 2)),
      per_s: Math.round(r.perSecond),
      p50_ms: Number.isFinite(r.p50) ? Number(f(r.p50)) : null,
      p99_ms: Number.isFinite(r.p99) ? Number(f(r.p99)) : null,
      max_ms: Number.isFinite(r.max) ? Number(f(r.max)) : null,
      repeats: r.repeats,
      failed_attempts: r.failedAttempts,
      ratio: Number(f(r.perSecond / baselineRate, 3)),
      ...(r.stages
        ? {
            stages_ms: {
              event_to_relayed: r.stages.outbox.map((v) => Number(f(v))),
              relayed_to_attempt: r.stages.queue.map((v) => Number(f(v))),
              attempt: r.stages.attempt.map((v) => Number(f(v))),
            },
          }
        : {}),
    })),
  };
  console.log(JSON.stringify(summary));
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const onSignal = () => {
    for (const handle of children) handle.child.kill('SIGTERM');
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const receiver = await startReceiver();
  const queuePrefix = `bench-webhooks-${randomBytes(4).toString('hex')}`;
  let db: Db | undefined;
  try {
    process.stderr.write(`database ${DATABASE_URL}, redis ${REDIS_URL}\n`);
    const prepared = await prepareDatabase(receiver.url);
    db = prepared.db;
    const results: Measured[] = [];

    results.push(await baseline('(a) baseline: bare BullMQ worker, no-op jobs', BASELINE_JOBS));
    results.push(await baseline("(a') bare BullMQ worker, one HTTP POST per job", BASELINE_POST_JOBS, receiver.url));

    const first = await startDispatcher('dispatcher 1', queuePrefix);
    const one = await dispatcherRuns(1, db, prepared.tenantId, receiver);
    const second = await startDispatcher('dispatcher 2', queuePrefix);
    const two = await dispatcherRuns(2, db, prepared.tenantId, receiver);
    results.push(one.burst, two.burst, one.paced, two.paced);
    await Promise.all([stopChild(first), stopChild(second)]);

    report(results, results[0]!.perSecond);
    process.stderr.write(`bench took ${((Date.now() - startedAt) / 1000).toFixed(0)} s\n`);
  } finally {
    await Promise.all([...children].map((handle) => stopChild(handle)));
    await receiver.close();
    const connection = queueConnection(REDIS_URL);
    const queue = createDeliveryQueue(connection, queuePrefix);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
    await db?.$disconnect();
  }
}

if (process.argv[2] === '--baseline-worker') {
  void baselineWorker();
} else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
