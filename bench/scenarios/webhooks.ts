import { randomBytes, randomUUID } from 'node:crypto';
import { createDeliveryQueue, enqueueDeliveries, queueConnection } from '@booking/webhook-queue';
import { nextLine, rssMb, spawnNode, stopChild, type Child } from '../lib/children';
import { addCpu, describeCpu, measureCpu, type CpuUse } from '../lib/cpu';
import { REDIS_URL, ROOT } from '../lib/env';
import { roundOrder, roundsFor } from '../lib/load';
import {
  awaitArrivals,
  awaitSettled,
  startDispatcher,
  summariseBurst,
  WEBHOOK_CONCURRENCY,
  writeBurst,
  type Burst,
  type Outbox,
} from '../lib/outbox';
import type { Receiver } from '../lib/receiver';
import { noRows, type CheckoutRows, type Row } from '../lib/report';

export const BURST_EVENTS = 3_000;
const NOOP_JOBS = 10_000;
const ENQUEUE_BATCH = 200; // the relay's batch
const ROUND_TIMEOUT_MS = 60_000;

const NOOP = 'BullMQ ceiling: no-op jobs';
const POST_CEILING = `BullMQ ceiling: one POST per job (kept-alive connections), ${BURST_EVENTS} jobs a round`;
const BURST = `dispatcher burst: ${BURST_EVENTS} events committed at once, commit -> receiver`;
const RELAY = 'dispatcher burst: relay stage (commit -> relayed_at)';

/**
 * A bare BullMQ worker process (the webhook ceiling) kept up over rounds. Each round queues
 * `jobsPerRound` jobs from here, in the relay's batches and with the dispatcher's job options, and
 * is timed from the first enqueue to the last job's completion.
 */
interface CeilingWorker {
  /** Jobs completed (failed ones left out) and the round's time. */
  round(): Promise<{ jobs: number; failed: number; seconds: number }>;
  close(): Promise<void>;
}

async function startCeilingWorker(jobsPerRound: number, postUrl?: string): Promise<CeilingWorker> {
  const prefix = `bench-webhooks-ceiling-${randomBytes(4).toString('hex')}`;
  const connection = queueConnection(REDIS_URL);
  const queue = createDeliveryQueue(connection, prefix);
  const child = spawnNode('BullMQ ceiling', ROOT, ['bench/ceilings/bullmq-worker.ts'], {
    QUEUE_PREFIX: prefix,
    BENCH_ROUND_JOBS: String(jobsPerRound),
    WEBHOOK_CONCURRENCY: String(WEBHOOK_CONCURRENCY),
    ...(postUrl ? { BENCH_POST_URL: postUrl } : {}),
  });
  const close = async () => {
    await stopChild(child);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
  };
  try {
    await nextLine(child, (line) => line === 'ready', 30_000);
  } catch (error) {
    await close();
    throw error;
  }
  // The worker's line counts failed jobs since it started.
  let failedBefore = 0;
  return {
    async round() {
      const started = Date.now();
      for (let i = 0; i < jobsPerRound; i += ENQUEUE_BATCH) {
        const batch = Array.from({ length: Math.min(ENQUEUE_BATCH, jobsPerRound - i) }, () => ({ id: randomUUID() }));
        await enqueueDeliveries(queue, batch, [0]);
      }
      // A round that does not finish in time throws: the scenario fails and says so.
      const line = JSON.parse(await nextLine(child, (l) => l.startsWith('{'), ROUND_TIMEOUT_MS)) as {
        failed: number;
        last: number;
      };
      const failed = line.failed - failedBefore;
      failedBefore = line.failed;
      return { jobs: jobsPerRound - failed, failed, seconds: (line.last - started) / 1000 };
    },
    close,
  };
}

/** BullMQ with no-op jobs: what the queue alone allows, one run. */
export async function noopCeiling(): Promise<Row[]> {
  process.stderr.write(`${NOOP}: ${NOOP_JOBS} jobs... `);
  const worker = await startCeilingWorker(NOOP_JOBS);
  try {
    const { jobs, failed, seconds } = await worker.round();
    process.stderr.write(`${(jobs / seconds).toFixed(0)} jobs/s\n`);
    return [
      {
        name: NOOP,
        unit: 'per_s',
        value: jobs / seconds,
        p50: NaN,
        p99: NaN,
        ...(failed ? { note: `${failed} failed` } : {}),
      },
    ];
  } finally {
    await worker.close();
  }
}

/**
 * One burst through the running dispatchers: its deliveries (timed from the commit to the last
 * arrival), and the CPU taken from the commit until every delivery is recorded as succeeded.
 */
export interface BurstRound {
  commits: Map<string, number>;
  burst: Burst;
  cpu: CpuUse;
  connections: number;
  /** Deliveries not recorded as succeeded in time: their bookkeeping ran into the next round. */
  unsettled: number;
}

export async function oneBurst(outbox: Outbox, receiver: Receiver): Promise<BurstRound> {
  const connectionsBefore = receiver.connections();
  const commits = await writeBurst(outbox, BURST_EVENTS);
  const [settled, cpu] = await measureCpu(async () => {
    await awaitArrivals(receiver, commits);
    return awaitSettled(outbox, commits);
  });
  const burst = await summariseBurst(outbox, receiver, commits);
  return {
    commits,
    burst,
    cpu,
    connections: receiver.connections() - connectionsBefore,
    unsettled: commits.size - settled,
  };
}

/**
 * A burst for each of the `processes` (dispatchers) running, settled before anything is measured:
 * the warm-up the ceiling gets (a whole round). A fresh process warmed by 300 events sent its
 * first measured burst at 900-1,100 deliveries/s with 0.8-0.9 ms of CPU each, against
 * 1,600-1,800 and 0.4 ms once warm (JIT, pools), which held a side's rounds down by a fifth. A
 * warm-up that does not settle in time throws: its deliveries would run into the measured burst.
 */
export async function warmUp(outbox: Outbox, receiver: Receiver, processes = 1): Promise<void> {
  const commits = await writeBurst(outbox, BURST_EVENTS * processes);
  await awaitArrivals(receiver, commits);
  const settled = await awaitSettled(outbox, commits);
  if (settled < commits.size) throw new Error(`warm-up: ${settled} of ${commits.size} deliveries settled in time`);
}

/**
 * A side's rounds as one: deliveries per second over the rounds' time (each from its commit to
 * its last arrival), latencies and stages over every round's events, CPU added up.
 */
export async function mergeBursts(outbox: Outbox, receiver: Receiver, rounds: BurstRound[]) {
  const all = await summariseBurst(outbox, receiver, new Map(rounds.flatMap((r) => [...r.commits])));
  const delivered = rounds.reduce((sum, r) => sum + r.burst.delivered, 0);
  const seconds = rounds.reduce((sum, r) => sum + r.burst.seconds, 0);
  const cpu = addCpu(rounds.map((r) => r.cpu));
  const connections = rounds.reduce((sum, r) => sum + r.connections, 0);
  const unsettled = rounds.reduce((sum, r) => sum + r.unsettled, 0);
  const note = [
    all.missing ? `${all.missing} missing` : '',
    all.repeats ? `${all.repeats} repeats` : '',
    unsettled ? `${unsettled} not recorded in time` : '',
    `${connections} TCP connections`,
    `queue p50 ${all.queue[0].toFixed(0)} ms, POST p50 ${all.attempt[0].toFixed(0)} ms`,
    describeCpu(cpu, delivered, 'delivery'),
  ]
    .filter(Boolean)
    .join('; ');
  return { ...all, perSecond: delivered / seconds, note };
}

/**
 * The burst through one unpinned dispatcher process of each checkout, in rounds side by side with
 * the BullMQ + POST ceiling (a worker process kept up beside them, the same receiver): one
 * warm-up each, then roundsFor(sides) rounds in which the ceiling takes a 3,000-job round and each
 * dispatcher a 3,000-event burst, in roundOrder. Unpaired, the ratio swung by a third between
 * runs of the same code. The ceiling row is shared: every checkout's ratio is taken against it.
 */
export async function dispatcherBurst(outboxes: Outbox[], receiver: Receiver): Promise<CheckoutRows> {
  const dispatchers: Child[] = [];
  let ceiling: CeilingWorker | undefined;
  try {
    for (const outbox of outboxes)
      dispatchers.push(await startDispatcher(outbox, `dispatcher (${outbox.checkout.label})`));
    ceiling = await startCeilingWorker(BURST_EVENTS, receiver.url);
    const worker = ceiling;
    process.stderr.write(
      `${[POST_CEILING, ...outboxes.map((o) => `${BURST} [${o.checkout.label}]`)].join(' | ')}: warming up... `,
    );
    await worker.round();
    for (const outbox of outboxes) await warmUp(outbox, receiver);
    const sides: (Outbox | 'ceiling')[] = ['ceiling', ...outboxes];
    const rounds = roundsFor(sides.length);
    process.stderr.write(`measuring ${rounds} rounds... `);
    const bare: { jobs: number; failed: number; seconds: number; cpu: CpuUse; connections: number }[] = [];
    const bursts = new Map<Outbox, BurstRound[]>(outboxes.map((outbox) => [outbox, []]));
    const ceilingRound = async () => {
      const connectionsBefore = receiver.connections();
      const [timed, cpu] = await measureCpu(() => worker.round());
      bare.push({ ...timed, cpu, connections: receiver.connections() - connectionsBefore });
    };
    for (let round = 0; round < rounds; round += 1)
      for (const side of roundOrder(sides, round)) {
        if (side === 'ceiling') await ceilingRound();
        else bursts.get(side)!.push(await oneBurst(side, receiver));
      }
    const jobs = bare.reduce((sum, r) => sum + r.jobs, 0);
    const ceilingPerSecond = jobs / bare.reduce((sum, r) => sum + r.seconds, 0);
    const results: Awaited<ReturnType<typeof mergeBursts>>[] = [];
    for (const outbox of outboxes) results.push(await mergeBursts(outbox, receiver, bursts.get(outbox)!));
    process.stderr.write(
      `${[`${ceilingPerSecond.toFixed(0)} jobs/s`, ...results.map((r) => `${r.perSecond.toFixed(0)} deliveries/s, relay p50 ${r.relay[0].toFixed(0)} ms`)].join(' | ')}\n`,
    );
    const failed = bare.reduce((sum, r) => sum + r.failed, 0);
    const ceilingNote = [
      failed ? `${failed} failed` : '',
      `${bare.reduce((sum, r) => sum + r.connections, 0)} TCP connections`,
      describeCpu(addCpu(bare.map((r) => r.cpu)), jobs, 'job'),
    ]
      .filter(Boolean)
      .join('; ');
    const rows = noRows();
    rows.after.push({
      name: POST_CEILING,
      unit: 'per_s',
      value: ceilingPerSecond,
      p50: NaN,
      p99: NaN,
      note: ceilingNote,
    });
    outboxes.forEach((outbox, i) => {
      const result = results[i]!;
      rows[outbox.checkout.label].push(
        {
          name: BURST,
          unit: 'per_s',
          against: POST_CEILING,
          goal: { minRatio: 0.6 },
          value: result.perSecond,
          p50: result.p50,
          p99: result.p99,
          rssMb: { dispatcher: rssMb(dispatchers[i]!) },
          note: result.note,
        },
        { name: RELAY, unit: 'ms', goal: { maxP50Ms: 100 }, p50: result.relay[0], p99: result.relay[1] },
      );
    });
    return rows;
  } finally {
    await ceiling?.close();
    for (const dispatcher of dispatchers) await stopChild(dispatcher);
  }
}
