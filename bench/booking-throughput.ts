/**
 * Booking throughput on loopback: `pnpm bench`.
 *
 * Starts the API as a child process (`node --import tsx apps/api/src/main.ts`) on the bench
 * database, and a bare Express 5 + ioredis app as the baseline (this same file, run with
 * `--baseline-server`), so neither shares an event loop with the load generator (autocannon, in
 * this process). PostgreSQL and Redis are the real ones; everything runs on the same machine, so
 * the figures are relative, not capacity planning.
 *
 * Scenarios (connections 50; duration runs: 2 s warm-up + 10 s; booking runs: 200 warm-up + 2000):
 *   baseline  GET / doing one Redis GET
 *   (b)  POST /api/bookings/hold, one hot slot, HOLD_TTL_SECONDS=2 (live holds stay few)
 *   (b') the same with the production HOLD_TTL_SECONDS=600: every hold stays live for the whole
 *        run, and the capacity check sums every live hold of the slot in a Redis script
 *   (c)  POST /api/bookings/hold over 200 slots, round robin, HOLD_TTL_SECONDS=2
 *   (d)  POST /api/bookings on one hot slot, then over 200 slots, each request converting a fresh
 *        hold made through the API beforehand (HOLD_TTL_SECONDS=600)
 *
 * Environment: DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/booking_bench, created
 * and migrated if needed), REDIS_URL (default redis://127.0.0.1:6379).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { applyMigrations, createPrismaClient, createRedis, seedDemoTenant } from '@booking/db';

const ROOT = path.resolve(__dirname, '..');
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/booking_bench';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = 10;
const BOOKING_WARMUP = 200;
const BOOKING_AMOUNT = 2000;
const MANY_SLOTS = 200;
const SHORT_HOLD_TTL = '2';
const CAPACITY = 1_000_000;
// Each scenario is bounded by its duration or amount; this only guards against a stuck run.
const RUN_TIMEOUT_MS = 45_000;

// ---------------------------------------------------------------------------------------------
// The baseline server (child process): a bare Express 5 app, one route, one Redis GET.

/** The little of Express the baseline uses; express itself is a dependency of apps/api. */
interface MiniResponse {
  json(body: unknown): void;
}
interface MiniApp {
  disable(setting: string): void;
  get(path: string, handler: (req: unknown, res: MiniResponse) => Promise<void>): void;
  listen(port: number, host: string, callback: () => void): unknown;
}

async function baselineServer(port: number): Promise<void> {
  const express = createRequire(path.join(ROOT, 'apps/api/package.json'))('express') as () => MiniApp;
  const redis = createRedis(REDIS_URL);
  await redis.set('bench:baseline', 'hello');
  const app = express();
  app.disable('x-powered-by');
  app.get('/', async (_req, res) => {
    res.json({ value: await redis.get('bench:baseline') });
  });
  app.listen(port, '127.0.0.1', () => console.log(`baseline listening on ${port}`));
  process.once('SIGTERM', () => process.exit(0));
}

// ---------------------------------------------------------------------------------------------
// Child processes.

interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  /** Last lines the child printed (warnings and errors at LOG_LEVEL=warn). */
  output: string[];
  lines: number;
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startServer(
  name: string,
  args: string[],
  env: Record<string, string>,
  readyPath: string,
): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const server: Server = { name, url: `http://127.0.0.1:${port}`, child, output: [], lines: 0 };
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      server.lines += 1;
      server.output.push(line.slice(0, 300));
      if (server.output.length > 5) server.output.shift();
    }
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);

  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${server.output.join('\n')}`);
    if (Date.now() > deadline) {
      await stopServer(server);
      throw new Error(`${name} was not ready within 60 s:\n${server.output.join('\n')}`);
    }
    try {
      const res = await fetch(`${server.url}${readyPath}`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return server;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
}

async function stopServer(server: Server | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

function startApi(holdTtlSeconds: string): Promise<Server> {
  return startServer(
    `api (HOLD_TTL_SECONDS=${holdTtlSeconds})`,
    ['apps/api/src/main.ts'],
    {
      NODE_ENV: 'production',
      TOKEN_SIGNING_SECRET: randomBytes(32).toString('hex'),
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      DATABASE_URL,
      REDIS_URL,
      LOG_LEVEL: 'warn',
      HOLD_TTL_SECONDS: holdTtlSeconds,
      RATE_LIMIT_HOLDS_PER_MINUTE: '1000000000',
      RATE_LIMIT_BOOKINGS_PER_MINUTE: '1000000000',
    },
    '/readyz',
  );
}

// ---------------------------------------------------------------------------------------------
// Load generation.

interface Measured {
  scenario: string;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
}

type RequestSpec = NonNullable<autocannon.Options['requests']>[number];

interface Run {
  url: string;
  requests: RequestSpec[];
  /** A fixed number of requests, or else `duration` seconds (default DURATION_SECONDS). */
  amount?: number;
  duration?: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * One autocannon run. Requests per second are completed responses over the time from start to
 * the last response (autocannon's own duration rounds up to its next one-second tick, which
 * distorts short fixed-amount runs); p50/p99 come from every response's latency, unrounded.
 */
async function cannon(scenario: string, run: Run): Promise<Measured> {
  const latencies: number[] = [];
  const started = performance.now();
  let last = started;
  // Without a callback autocannon returns its instance, which is also a promise of the result.
  const instance = autocannon({
    url: run.url,
    connections: CONNECTIONS,
    pipelining: 1,
    timeout: 10,
    ...(run.amount ? { amount: run.amount } : { duration: run.duration ?? DURATION_SECONDS }),
    requests: run.requests,
  }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
    last = performance.now();
  });
  const guard = setTimeout(() => instance.stop(), RUN_TIMEOUT_MS);
  const result = await instance;
  clearTimeout(guard);

  latencies.sort((x, y) => x - y);
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
    statuses[code] = (stat as { count: number }).count;
  return {
    scenario,
    requests: latencies.length,
    rps: latencies.length / ((last - started) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statuses,
  };
}

/** A warm-up (discarded), then the measured run. */
async function measure(scenario: string, warmup: Run, run: Run): Promise<Measured> {
  process.stderr.write(`${scenario}: warming up... `);
  await cannon(scenario, warmup);
  process.stderr.write('measuring... ');
  const measured = await cannon(scenario, run);
  process.stderr.write(`${measured.rps.toFixed(0)} req/s\n`);
  return measured;
}

const json = { 'content-type': 'application/json' };

function roundRobin<T>(items: T[]): () => T {
  let i = 0;
  return () => items[i++ % items.length]!;
}

/** POST /api/bookings/hold for 1 seat, cycling over `slots`. */
function holdRequests(experienceId: string, slots: string[]): RequestSpec[] {
  const nextSlot = roundRobin(slots);
  return [
    {
      method: 'POST',
      path: '/api/bookings/hold',
      headers: json,
      setupRequest: (req) => ({
        ...req,
        body: JSON.stringify({ slot_id: nextSlot(), experience_id: experienceId, seats: 1 }),
      }),
    },
  ];
}

/** POST /api/bookings, each request converting the next prepared hold. */
function bookingRequests(bodies: object[]): RequestSpec[] {
  let i = 0;
  return [
    {
      method: 'POST',
      path: '/api/bookings',
      headers: json,
      // Past the prepared holds a request still goes out, and counts as non-2xx.
      setupRequest: (req) => ({ ...req, body: JSON.stringify(bodies[i++] ?? { hold_id: randomUUID() }) }),
    },
  ];
}

interface Target {
  venueId: string;
  experienceId: string;
}

/** Holds made through the API (concurrently) and the booking bodies that convert them. */
async function prepareBookings(api: Server, target: Target, slots: string[], count: number): Promise<object[]> {
  const nextSlot = roundRobin(slots);
  const plan = Array.from({ length: count }, () => nextSlot());
  const bodies: object[] = [];
  let next = 0;
  const worker = async () => {
    while (next < plan.length) {
      const slotId = plan[next++]!;
      const res = await fetch(`${api.url}/api/bookings/hold`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ slot_id: slotId, experience_id: target.experienceId, seats: 2 }),
      });
      const body = (await res.json()) as { hold_id?: string };
      if (res.status !== 200 || !body.hold_id)
        throw new Error(`hold for the booking run failed: ${res.status} ${JSON.stringify(body)}`);
      // One guest of the two held: the booking also hands a seat back.
      bodies.push({
        hold_id: body.hold_id,
        slot_id: slotId,
        experience_id: target.experienceId,
        venue_id: target.venueId,
        guest_count: 1,
        customer: { email: `bench-${body.hold_id}@example.com`, first_name: 'Bench' },
      });
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  return bodies;
}

// ---------------------------------------------------------------------------------------------
// The bench.

async function prepareDatabase() {
  await applyMigrations(DATABASE_URL);
  const db = createPrismaClient(DATABASE_URL, { poolSize: 2 });
  try {
    const demo = await seedDemoTenant(db, { name: `Bench ${new Date().toISOString()}` });
    const experience = demo.experiences[0]!; // party 1..12
    const base = Date.now() + 3 * 24 * 3600 * 1000;
    // Fresh slots every run, so nothing left in Redis by an earlier run counts.
    const makeSlots = async (count: number) => {
      const rows = Array.from({ length: count }, (_, i) => {
        const startsAt = new Date(base + i * 3600 * 1000);
        return {
          id: randomUUID(),
          tenantId: demo.tenant.id,
          experienceId: experience.id,
          startsAt,
          endsAt: new Date(startsAt.getTime() + 2 * 3600 * 1000),
          capacity: CAPACITY,
        };
      });
      await db.slot.createMany({ data: rows });
      return rows.map((row) => row.id);
    };
    return {
      target: { venueId: demo.venue_id, experienceId: experience.id },
      hotHoldSlot: await makeSlots(1),
      hotHoldSlotLongTtl: await makeSlots(1),
      manyHoldSlots: await makeSlots(MANY_SLOTS),
      hotBookingSlot: await makeSlots(1),
      manyBookingSlots: await makeSlots(MANY_SLOTS),
    };
  } finally {
    await db.$disconnect();
  }
}

function report(results: Measured[], baselineRps: number): void {
  const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
  const lines = [
    '',
    `Loopback, ${CONNECTIONS} connections; duration runs ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s, booking runs ${BOOKING_WARMUP} warm-up + ${BOOKING_AMOUNT} requests.`,
    '',
    '| scenario | requests | req/s | p50 ms | p99 ms | non-2xx | errors | vs baseline |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.scenario} | ${r.requests} | ${f(r.rps, 0)} | ${f(r.p50, 2)} | ${f(r.p99, 2)} | ${r.non2xx} | ${r.errors} | ${f(r.rps / baselineRps, 3)} |`,
    ),
    '',
    ...results.filter((r) => r.non2xx > 0).map((r) => `non-2xx in "${r.scenario}": ${JSON.stringify(r.statuses)}`),
  ];
  console.log(lines.join('\n'));
  const summary = {
    bench: 'booking-throughput',
    connections: CONNECTIONS,
    baseline_rps: Math.round(baselineRps),
    scenarios: results.map((r) => ({
      name: r.scenario,
      requests: r.requests,
      rps: Math.round(r.rps),
      p50_ms: Number(f(r.p50, 2)),
      p99_ms: Number(f(r.p99, 2)),
      non_2xx: r.non2xx,
      errors: r.errors,
      ratio: Number(f(r.rps / baselineRps, 3)),
    })),
  };
  console.log(JSON.stringify(summary));
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const servers: Server[] = [];
  const start = async (make: () => Promise<Server>) => {
    const server = await make();
    servers.push(server);
    return server;
  };
  const stop = async (server: Server) => {
    // autocannon drops its sockets at the end of a run with requests still in flight; let the
    // server finish them before SIGTERM, or they would fail against closed pools.
    await sleep(1_500);
    await stopServer(server);
    if (server.lines > 0) {
      process.stderr.write(`${server.name} printed ${server.lines} log line(s); last: ${server.output.at(-1)}\n`);
    }
  };
  const onSignal = () => {
    for (const server of servers) server.child.kill('SIGTERM');
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    process.stderr.write(`database ${DATABASE_URL}, redis ${REDIS_URL}\n`);
    const setup = await prepareDatabase();
    const { target } = setup;
    const results: Measured[] = [];

    // (a) Baseline.
    const baseline = await start(() =>
      startServer('baseline', [path.join('bench', 'booking-throughput.ts'), '--baseline-server'], {}, '/'),
    );
    const baselineRun: Run = { url: baseline.url, requests: [{ method: 'GET', path: '/' }] };
    results.push(
      await measure('(a) baseline: Express 5 + one Redis GET', withDuration(baselineRun, WARMUP_SECONDS), baselineRun),
    );
    await stop(baseline);

    // (b), (c) Holds, with short-lived holds.
    let api = await start(() => startApi(SHORT_HOLD_TTL));
    const hot = holdRequests(target.experienceId, setup.hotHoldSlot);
    results.push(
      await measure(
        `(b) POST /api/bookings/hold, 1 hot slot (TTL ${SHORT_HOLD_TTL} s)`,
        withDuration({ url: api.url, requests: hot }, WARMUP_SECONDS),
        { url: api.url, requests: hot },
      ),
    );
    const many = holdRequests(target.experienceId, setup.manyHoldSlots);
    results.push(
      await measure(
        `(c) POST /api/bookings/hold, ${MANY_SLOTS} slots round robin (TTL ${SHORT_HOLD_TTL} s)`,
        withDuration({ url: api.url, requests: many }, WARMUP_SECONDS),
        { url: api.url, requests: many },
      ),
    );
    await stop(api);

    // (b') and (d): holds that last (the production 600 s).
    api = await start(() => startApi('600'));
    const hotLong = holdRequests(target.experienceId, setup.hotHoldSlotLongTtl);
    results.push(
      await measure(
        "(b') POST /api/bookings/hold, 1 hot slot (TTL 600 s, live holds pile up)",
        withDuration({ url: api.url, requests: hotLong }, WARMUP_SECONDS),
        { url: api.url, requests: hotLong },
      ),
    );

    for (const [label, slots] of [
      ['1 hot slot', setup.hotBookingSlot],
      [`${MANY_SLOTS} slots`, setup.manyBookingSlots],
    ] as const) {
      process.stderr.write(`(d) ${label}: placing ${BOOKING_WARMUP + BOOKING_AMOUNT} holds through the API... `);
      const holdsStarted = Date.now();
      const bodies = await prepareBookings(api, target, slots, BOOKING_WARMUP + BOOKING_AMOUNT + 2 * CONNECTIONS);
      process.stderr.write(`${((Date.now() - holdsStarted) / 1000).toFixed(1)} s\n`);
      const requests = bookingRequests(bodies);
      results.push(
        await measure(
          `(d) POST /api/bookings, ${label}`,
          { url: api.url, requests, amount: BOOKING_WARMUP },
          { url: api.url, requests, amount: BOOKING_AMOUNT },
        ),
      );
    }
    await stop(api);

    report(results, results[0]!.rps);
    process.stderr.write(`bench took ${((Date.now() - startedAt) / 1000).toFixed(0)} s\n`);
  } finally {
    await Promise.all(servers.map((server) => stopServer(server)));
  }
}

/** The same requests for `seconds` (the warm-up). */
function withDuration(run: Run, seconds: number): Run {
  return { url: run.url, requests: run.requests, duration: seconds };
}

if (process.argv[2] === '--baseline-server') {
  void baselineServer(Number(process.env.PORT));
} else {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
