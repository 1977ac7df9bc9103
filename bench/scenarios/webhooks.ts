import { randomBytes, randomUUID } from 'node:crypto';
import { createDeliveryQueue, enqueueDeliveries, queueConnection } from '@booking/webhook-queue';
import { nextLine, rssMb, spawnNode, stopChild, type Child } from '../lib/children';
import { REDIS_URL, ROOT } from '../lib/env';
import {
  awaitArrivals,
  startDispatcher,
  summariseBurst,
  WEBHOOK_CONCURRENCY,
  writeBurst,
  type Outbox,
} from '../lib/outbox';
import type { Receiver } from '../lib/receiver';
import type { Row } from '../lib/report';

const BURST_EVENTS = 3_000;
const WARMUP_EVENTS = 300;
const NOOP_JOBS = 10_000;
const POST_JOBS = 3_000;
const ENQUEUE_BATCH = 200; // the relay's batch
const RUN_TIMEOUT_MS = 60_000;

const NOOP = 'BullMQ ceiling: no-op jobs';
const POST_CEILING = 'BullMQ ceiling: one POST per job (kept-alive connections)';
const BURST = `dispatcher burst: ${BURST_EVENTS} events committed at once, commit -> receiver`;
const RELAY = 'dispatcher burst: relay stage (commit -> relayed_at)';

/** A bare BullMQ worker process taking `jobs` jobs queued from here, as the relay queues them. */
async function ceiling(jobs: number, postUrl?: string): Promise<{ perSecond: number; missing: number }> {
  const prefix = `bench-webhooks-ceiling-${randomBytes(4).toString('hex')}`;
  const connection = queueConnection(REDIS_URL);
  const queue = createDeliveryQueue(connection, prefix);
  const worker = spawnNode('BullMQ ceiling', ROOT, ['bench/ceilings/bullmq-worker.ts'], {
    QUEUE_PREFIX: prefix,
    BENCH_JOBS: String(jobs),
    WEBHOOK_CONCURRENCY: String(WEBHOOK_CONCURRENCY),
    ...(postUrl ? { BENCH_POST_URL: postUrl } : {}),
  });
  try {
    await nextLine(worker, (line) => line === 'ready', 30_000);
    const started = Date.now();
    for (let i = 0; i < jobs; i += ENQUEUE_BATCH) {
      const batch = Array.from({ length: Math.min(ENQUEUE_BATCH, jobs - i) }, () => ({ id: randomUUID() }));
      await enqueueDeliveries(queue, batch, [0]);
    }
    try {
      const done = JSON.parse(await nextLine(worker, (line) => line.startsWith('{'), RUN_TIMEOUT_MS)) as {
        last: number;
      };
      return { perSecond: jobs / ((done.last - started) / 1000), missing: 0 };
    } catch {
      const counts = await queue.getJobCounts('waiting', 'active');
      const missing = (counts.waiting ?? 0) + (counts.active ?? 0);
      return { perSecond: (jobs - missing) / ((Date.now() - started) / 1000), missing };
    }
  } finally {
    await stopChild(worker);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
  }
}

export async function webhookCeilings(receiver: Receiver): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, jobs, url] of [
    [NOOP, NOOP_JOBS, undefined],
    [POST_CEILING, POST_JOBS, receiver.url],
  ] as const) {
    process.stderr.write(`${name}: ${jobs} jobs... `);
    const connectionsBefore = receiver.connections();
    const { perSecond, missing } = await ceiling(jobs, url);
    process.stderr.write(`${perSecond.toFixed(0)} jobs/s\n`);
    const notes = [
      missing ? `${missing} not done in time` : '',
      url ? `${receiver.connections() - connectionsBefore} TCP connections` : '',
    ].filter(Boolean);
    rows.push({
      name,
      unit: 'per_s',
      value: perSecond,
      p50: NaN,
      p99: NaN,
      ...(notes.length ? { note: notes.join('; ') } : {}),
    });
  }
  return rows;
}

/**
 * A warm-up, then one burst of BURST_EVENTS through the running `dispatchers`: deliveries per
 * second from the commit to the last arrival, latencies, stages, and the dispatchers' RSS.
 */
export async function burst(outbox: Outbox, receiver: Receiver, dispatchers: Child[]) {
  process.stderr.write(`${dispatchers.map((d) => d.name).join(' + ')}: warming up... `);
  await awaitArrivals(receiver, await writeBurst(outbox, WARMUP_EVENTS));
  process.stderr.write(`burst of ${BURST_EVENTS}... `);
  const connectionsBefore = receiver.connections();
  const commits = await writeBurst(outbox, BURST_EVENTS);
  await awaitArrivals(receiver, commits);
  const result = await summariseBurst(outbox, receiver, commits);
  const connections = receiver.connections() - connectionsBefore;
  process.stderr.write(`${result.perSecond.toFixed(0)} deliveries/s, relay p50 ${result.relay[0].toFixed(0)} ms\n`);
  const rssMbOf = Object.fromEntries(
    dispatchers.map((d, i) => [`dispatcher${dispatchers.length > 1 ? i + 1 : ''}`, rssMb(d)]),
  );
  const notes = [
    result.missing ? `${result.missing} missing` : '',
    result.repeats ? `${result.repeats} repeats` : '',
    `${connections} TCP connections`,
    `queue p50 ${result.queue[0].toFixed(0)} ms, POST p50 ${result.attempt[0].toFixed(0)} ms`,
  ].filter(Boolean);
  return { result, rssMb: rssMbOf, note: notes.join('; ') };
}

/** One unpinned dispatcher process of the checkout: the burst and its relay stage. */
export async function dispatcherBurst(outbox: Outbox, receiver: Receiver): Promise<Row[]> {
  const dispatcher = await startDispatcher(outbox, `dispatcher (${outbox.checkout.label})`);
  try {
    const { result, rssMb: rss, note } = await burst(outbox, receiver, [dispatcher]);
    return [
      {
        name: BURST,
        unit: 'per_s',
        against: POST_CEILING,
        goal: { minRatio: 0.6 },
        value: result.perSecond,
        p50: result.p50,
        p99: result.p99,
        rssMb: rss,
        note,
      },
      { name: RELAY, unit: 'ms', goal: { maxP50Ms: 100 }, p50: result.relay[0], p99: result.relay[1] },
    ];
  } finally {
    await stopChild(dispatcher);
  }
}
