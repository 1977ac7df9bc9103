import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';

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
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * One autocannon run (per URL, all at once). Requests per second are completed responses over
 * the time from start to the last response (autocannon's own duration rounds up to its next
 * one-second tick, which distorts short fixed-amount runs); p50/p99 from every response, unrounded.
 */
export async function cannon(run: Run): Promise<Measured> {
  const latencies: number[] = [];
  const started = performance.now();
  let last = started;
  const connections = Math.max(1, Math.floor((run.connections ?? CONNECTIONS) / run.urls.length));
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

  latencies.sort((x, y) => x - y);
  const statuses: Record<string, number> = {};
  for (const result of results)
    for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
      statuses[code] = (statuses[code] ?? 0) + (stat as { count: number }).count;
  return {
    requests: latencies.length,
    rps: latencies.length / ((last - started) / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    statuses,
  };
}

/** A warm-up of WARMUP_SECONDS (discarded), then the measured run. */
export async function measure(
  label: string,
  run: Run,
  warmup: Run = { ...run, amount: undefined, duration: WARMUP_SECONDS },
) {
  process.stderr.write(`${label}: warming up... `);
  await cannon(warmup);
  process.stderr.write('measuring... ');
  const measured = await cannon(run);
  process.stderr.write(
    `${measured.rps.toFixed(0)} req/s${measured.non2xx ? `, non-2xx ${JSON.stringify(measured.statuses)}` : ''}\n`,
  );
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

/** A run's figures as a report row takes them, with its refused answers noted. */
export function figures(m: Measured) {
  return {
    value: m.rps,
    p50: m.p50,
    p99: m.p99,
    ...(m.non2xx ? { note: `non-2xx ${JSON.stringify(m.statuses)}` } : {}),
  };
}
