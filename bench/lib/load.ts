import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { addCpu, describeCpu, measureCpu, type CpuUse } from './cpu';

/** Connections of every HTTP run, split evenly over the targets. */
export const CONNECTIONS = 50;
export const WARMUP_SECONDS = 2;
export const DURATION_SECONDS = 8;
// Each run is bounded by its duration or amount; this only guards against a stuck one.
const RUN_TIMEOUT_MS = 90_000;

export type RequestSpec = NonNullable<autocannon.Options['requests']>[number];

export interface Run {
  /** One server, or several (their requests are summed: a run over API replicas). */
  urls: string[];
  requests: RequestSpec[];
  /** A fixed number of requests in all, or else `duration` seconds (default DURATION_SECONDS). */
  amount?: number;
  duration?: number;
  connections?: number;
  /** Stops the run here whatever is left of it (default RUN_TIMEOUT_MS). */
  timeLimitMs?: number;
}

export interface Measured {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
  /** Where the machine's CPU went during the run (the warm-up left out). */
  cpu: CpuUse;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** What one autocannon run saw, before figures are taken from it: the rounds of a side are merged. */
interface Sample {
  latencies: number[];
  /** From the start to the last response. */
  seconds: number;
  results: autocannon.Result[];
  cpu: CpuUse;
}

/** One autocannon run (per URL, all at once). */
async function sample(run: Run): Promise<Sample> {
  const latencies: number[] = [];
  const [{ started, last, results }, cpu] = await measureCpu((end) => load(run, latencies, end));
  return { latencies, seconds: (last - started) / 1000, results, cpu };
}

/**
 * Runs `run`, each response's time in `latencies`. A fixed amount calls `loadEnded` at its last
 * response: autocannon reports only at its next one-second tick, so CPU measured until then would
 * count up to a second of idle cores (on a half-second round of the booking ceiling, half its
 * time). A duration run loads until that tick (its clients send until they are closed there), so
 * its report is its end. A request that failed (no response) leaves an amount short: its CPU then
 * runs to the report.
 */
async function load(run: Run, latencies: number[], loadEnded: () => void) {
  const started = performance.now();
  let last = started;
  const connections = Math.max(1, Math.floor((run.connections ?? CONNECTIONS) / run.urls.length));
  const expected = run.amount ? Math.ceil(run.amount / run.urls.length) * run.urls.length : undefined;
  const instances = run.urls.map((url) => {
    // Without a callback autocannon returns its instance, which is also a promise of the result.
    const instance = autocannon({
      url,
      connections,
      pipelining: 1,
      timeout: 10,
      ...(run.amount
        ? { amount: Math.ceil(run.amount / run.urls.length) }
        : { duration: run.duration ?? DURATION_SECONDS }),
      requests: run.requests,
    }) as unknown as autocannon.Instance & Promise<autocannon.Result>;
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
      last = performance.now();
      if (latencies.length === expected) loadEnded();
    });
    return instance;
  });
  // A run autocannon refused (bad options) has no stop(); its promise has already failed.
  const guard = setTimeout(() => instances.forEach((instance) => instance.stop?.()), run.timeLimitMs ?? RUN_TIMEOUT_MS);
  let results: autocannon.Result[];
  try {
    results = await Promise.all(instances);
  } finally {
    clearTimeout(guard);
  }
  return { started, last, results };
}

/**
 * The figures of one sample, or of several as one run. Requests per second are completed
 * responses over the time from start to the last response (autocannon's own duration rounds up
 * to its next one-second tick, which distorts short fixed-amount runs); p50/p99 from every
 * response, unrounded.
 */
function summarise(samples: Sample[]): Measured {
  const latencies = samples.flatMap((s) => s.latencies).sort((x, y) => x - y);
  const results = samples.flatMap((s) => s.results);
  const statuses: Record<string, number> = {};
  for (const result of results)
    for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
      statuses[code] = (statuses[code] ?? 0) + (stat as { count: number }).count;
  return {
    requests: latencies.length,
    rps: latencies.length / samples.reduce((sum, s) => sum + s.seconds, 0),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    statuses,
    cpu: addCpu(samples.map((s) => s.cpu)),
  };
}

/** One autocannon run's figures. */
export async function cannon(run: Run): Promise<Measured> {
  return summarise([await sample(run)]);
}

const warmupOf = (run: Run): Run => ({ ...run, amount: undefined, duration: WARMUP_SECONDS });

const outcome = (m: Measured) =>
  `${m.rps.toFixed(0)} req/s${m.non2xx ? `, non-2xx ${JSON.stringify(m.statuses)}` : ''}`;

/** A warm-up of WARMUP_SECONDS (discarded), then the measured run. */
export async function measure(label: string, run: Run, warmup: Run = warmupOf(run)) {
  process.stderr.write(`${label}: warming up... `);
  await cannon(warmup);
  process.stderr.write('measuring... ');
  const measured = await cannon(run);
  process.stderr.write(`${outcome(measured)}\n`);
  return measured;
}

/** Rounds of a measurement taken side by side: at least these, and one per side past them (see roundsFor). */
export const ROUNDS = 3;

/** Rounds for `sides` sides: one each can run first in (a Latin square), and never fewer than ROUNDS. */
export const roundsFor = (sides: number) => Math.max(ROUNDS, sides);

/** One side of a measurement taken side by side: its run, and its warm-up (default WARMUP_SECONDS of the run). */
export interface Side {
  label: string;
  run: Run;
  warmup?: Run;
}

/** Round `round` of `rounds` of a run taken side by side: its share of the run's amount, or of its duration. */
function slice(run: Run, round: number, rounds: number): Run {
  if (run.amount) {
    // Shares that add up to the amount (2,000 in 3 rounds: 666, 667, 667).
    const upTo = (r: number) => Math.floor((run.amount! * r) / rounds);
    return { ...run, amount: upTo(round + 1) - upTo(round) };
  }
  return { ...run, duration: (run.duration ?? DURATION_SECONDS) / rounds };
}

/**
 * The order the sides run in, in round `round`: turned by one each round (A B C, then B C A, then
 * C A B), so that no side runs first every round (a side alone in its place gains or loses
 * whatever that place does: running first after a pause, say). Over roundsFor(sides) rounds each
 * of three or more sides runs once in each place; of two, the first runs first in two rounds of
 * three. A side still follows the same one whenever it is not first.
 */
export function roundOrder<T>(sides: T[], round: number): T[] {
  const turn = round % sides.length;
  return [...sides.slice(turn), ...sides.slice(0, turn)];
}

/**
 * Runs measured side by side, for ratios of one to another: this machine's throughput drifts over
 * minutes, so runs measured minutes apart compare badly. One warm-up each, then roundsFor(sides)
 * rounds in which every side runs once (in roundOrder), each round a slice of the run (its amount
 * or duration divided by the rounds), so a side measures as much as alone. Each side's figures
 * merge its rounds: its requests over the time of its rounds, p50/p99 over all its responses.
 * Returns them in the order of `sides`.
 */
export async function measureSideBySide(sides: Side[]): Promise<Measured[]> {
  process.stderr.write(`${sides.map((side) => side.label).join(' | ')}: warming up... `);
  for (const side of sides) await cannon(side.warmup ?? warmupOf(side.run));
  const rounds = roundsFor(sides.length);
  process.stderr.write(`measuring ${rounds} rounds... `);
  const samples = new Map<Side, Sample[]>(sides.map((side) => [side, []]));
  for (let round = 0; round < rounds; round += 1)
    for (const side of roundOrder(sides, round)) samples.get(side)!.push(await sample(slice(side.run, round, rounds)));
  const measured = sides.map((side) => summarise(samples.get(side)!));
  process.stderr.write(`${measured.map(outcome).join(' | ')}\n`);
  return measured;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

export function roundRobin<T>(items: T[]): () => T {
  let i = 0;
  return () => items[i++ % items.length]!;
}

/**
 * POST `path` with the bodies `next()` makes; with `idempotencyKeys`, each with a fresh
 * Idempotency-Key, as a careful client sends them (the key's claim is then part of the work).
 */
export function posts(path: string, next: () => object, idempotencyKeys: boolean): RequestSpec[] {
  return [
    {
      method: 'POST',
      path,
      setupRequest: (req) => ({
        ...req,
        headers: idempotencyKeys ? { ...JSON_HEADERS, 'idempotency-key': randomUUID() } : JSON_HEADERS,
        body: JSON.stringify(next()),
      }),
    },
  ];
}

/** A run's figures as a report row takes them, with `notes`, its refused answers and its CPU noted. */
export function figures(m: Measured, ...notes: string[]) {
  return {
    value: m.rps,
    p50: m.p50,
    p99: m.p99,
    note: [...notes, m.non2xx ? `non-2xx ${JSON.stringify(m.statuses)}` : '', describeCpu(m.cpu, m.requests, 'request')]
      .filter(Boolean)
      .join('; '),
  };
}
