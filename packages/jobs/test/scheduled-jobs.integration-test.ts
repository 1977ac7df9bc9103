import { randomUUID } from 'node:crypto';
import { createLogger } from '@booking/logging';
import { sleep, waitUntil } from '@booking/test-kit';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startScheduledJobs, type JobContext, type ScheduledJob, type ScheduledJobs } from '../src';

// Several "pods" are several startScheduledJobs on connections of their own, as separate
// processes would have. Each test has its own key prefix and deletes its keys afterwards.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const QUEUE = 'lifecycle';
const logger = createLogger('silent', 'jobs-test');

interface Run {
  tickId: string;
  attempt: number;
  /** When its handler began (Date.now()). */
  startedAt?: number;
}

let prefix: string;
let connections: Redis[];
let pods: ScheduledJobs[];
let inspector: Queue;

beforeEach(() => {
  prefix = `test-jobs-${randomUUID()}`;
  connections = [];
  pods = [];
  inspector = new Queue(QUEUE, { connection: newConnection(), prefix });
});

afterEach(async () => {
  await Promise.all(pods.map((pod) => pod.close(2_000)));
  await inspector.close();
  const keys = connections[0]!;
  for (let cursor = '0'; ;) {
    const [next, found] = await keys.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (found.length > 0) await keys.del(...found);
    cursor = next;
    if (cursor === '0') break;
  }
  await Promise.all(connections.map((connection) => connection.quit()));
});

function newConnection(): Redis {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  connections.push(connection);
  return connection;
}

async function startPod(jobs: ScheduledJob[]): Promise<ScheduledJobs> {
  const pod = await startScheduledJobs({ connection: newConnection(), prefix, queueName: QUEUE, jobs, logger });
  pods.push(pod);
  return pod;
}

/** The scheduled time of a tick, which BullMQ puts at the end of the tick's job id. */
const tickTime = (tickId: string) => Number(tickId.slice(tickId.lastIndexOf(':') + 1));

describe('scheduled jobs', () => {
  it('when two pods run the same job every 250 ms, then each tick runs once and none is skipped while the workers keep up', async () => {
    const every = 250;
    const runs: Run[] = [];
    const job: ScheduledJob = {
      name: 'count-ticks',
      schedule: { every },
      async handler({ tickId, attempt }) {
        runs.push({ tickId, attempt, startedAt: Date.now() });
        return { counted: 1 };
      },
    };
    const podsStarting = Date.now();
    await startPod([job]);
    await startPod([job]);
    const windowStart = Date.now();
    await sleep(2_000); // the window the runs are counted over
    const windowEnd = Date.now();
    await Promise.all(pods.splice(0).map((pod) => pod.close()));
    const closed = Date.now();

    const ticks = [...new Set(runs.map((run) => run.tickId))].sort((x, y) => tickTime(x) - tickTime(y));
    expect(runs).toHaveLength(ticks.length); // no tick ran twice
    expect(runs.every((run) => run.attempt === 1)).toBe(true);
    // BullMQ makes a tick's successor when a worker takes the tick: the next interval, or, when
    // that has passed already (the worker took the tick more than an interval late, on a machine
    // too busy to run it on time), a later slot rather than a late run. So a tick taken on time
    // is followed by the next interval's; only a late one may be followed by a gap. (A pod
    // registering the schedule again may then place the successor off the schedule's phase.)
    const late = new Map(runs.map((run) => [run.tickId, run.startedAt! - tickTime(run.tickId)]));
    const afterOnTime = ticks
      .slice(1)
      .map((tick, i) => ({ after: ticks[i]!, gap: (tickTime(tick) - tickTime(ticks[i]!)) / every }))
      .filter(({ after }) => late.get(after)! < every);
    expect(afterOnTime.filter(({ gap }) => gap !== 1)).toEqual([]);
    // Lateness is the machine's, not the scheduler's way: most ticks start on time.
    expect(ticks.filter((tick) => late.get(tick)! >= every).length).toBeLessThanOrEqual(ticks.length / 2);
    // The ticks cover the window (with one interval's slack at each end) and fit in the time the
    // pods ran.
    const covered = (tickTime(ticks.at(-1)!) - tickTime(ticks[0]!)) / every + 1;
    expect(covered).toBeGreaterThanOrEqual(Math.floor((windowEnd - windowStart) / every) - 1);
    expect(ticks.length).toBeLessThanOrEqual(Math.ceil((closed - podsStarting) / every) + 1);
  });

  it('when a run takes longer than the interval, then no two runs of the job overlap across pods', async () => {
    let running = 0;
    let mostAtOnce = 0;
    let finished = 0;
    const slow: ScheduledJob = {
      name: 'slow',
      schedule: { every: 100 },
      async handler() {
        mostAtOnce = Math.max(mostAtOnce, ++running);
        await sleep(450); // a run four ticks long
        running--;
        finished++;
        return {};
      },
    };
    await startPod([slow]);
    await startPod([slow]);

    await waitUntil(() => finished >= 3, { timeoutMs: 10_000, what: 'three slow runs' });

    expect(mostAtOnce).toBe(1);
    const completed = await inspector.getCompleted();
    expect(completed.some((job) => job.returnvalue?.skipped === true)).toBe(true);
  });

  it('when a handler throws, then its tick runs again up to its attempts and then counts as failed', async () => {
    const runs: Run[] = [];
    await startPod([
      {
        name: 'always-fails',
        schedule: { every: 60_000 }, // the first tick comes at once, the next not during the test
        attempts: 3,
        backoffMs: 50,
        async handler({ tickId, attempt }) {
          runs.push({ tickId, attempt });
          throw new Error('database away');
        },
      },
    ]);

    await waitUntil(async () => (await inspector.getFailedCount()) === 1, { what: 'the tick to fail for good' });

    expect(runs.map((run) => run.attempt)).toEqual([1, 2, 3]);
    expect(new Set(runs.map((run) => run.tickId)).size).toBe(1);
    const [failed] = await inspector.getFailed();
    expect(failed?.failedReason).toBe('database away');
  });

  it('when a job is no longer defined, then the next start removes its scheduler and its next tick', async () => {
    const noop = (name: string): ScheduledJob => ({ name, schedule: { every: 60_000 }, handler: async () => ({}) });
    const first = await startPod([noop('kept'), noop('retired')]);
    expect((await inspector.getJobSchedulers()).map((s) => s.key).sort()).toEqual(['kept', 'retired']);
    await first.close();

    await startPod([noop('kept')]);

    expect((await inspector.getJobSchedulers()).map((s) => s.key)).toEqual(['kept']);
    expect((await inspector.getDelayed()).map((job) => job.name)).toEqual(['kept']);
  });

  it('when Redis comes back without the schedules, then the pods register them again on reconnecting', async () => {
    let runs = 0;
    await startPod([{ name: 'resilient', schedule: { every: 100 }, handler: async () => ({ run: ++runs }) }]);
    await waitUntil(() => runs >= 1, { what: 'a first run' });

    // What a Redis restarted without its data would have lost: the scheduler and its next tick.
    await inspector.removeJobScheduler('resilient');
    expect(await inspector.getJobSchedulers()).toEqual([]);
    connections[1]!.disconnect(true); // the pod's connection drops and is made again
    await waitUntil(async () => (await inspector.getJobSchedulers()).length === 1, { what: 'the scheduler again' });
    const before = runs;

    await waitUntil(() => runs >= before + 2, { what: 'runs after the reconnect' });
  });

  it('when the schedules are lost without the connection dropping, then the pods register them again on a timer', async () => {
    let runs = 0;
    await startPod([{ name: 'failed-over', schedule: { every: 300 }, handler: async () => ({ run: ++runs }) }]);
    await waitUntil(() => runs >= 1, { what: 'a first run' });

    // What a Redis Cluster failover can lose (writes its replica had not received) while the
    // client stays connected: the scheduler and its next tick.
    await inspector.removeJobScheduler('failed-over');
    expect(await inspector.getJobSchedulers()).toEqual([]);
    await waitUntil(async () => (await inspector.getJobSchedulers()).length === 1, {
      what: 'the scheduler again, within twice its period',
      timeoutMs: 3_000,
    });
    const before = runs;

    await waitUntil(() => runs >= before + 2, { what: 'runs after it was registered again' });
  });

  it("when old and new pods of a rolling deploy define different jobs, then neither removes the other one's schedule", async () => {
    const job = (name: string): ScheduledJob => ({ name, schedule: { every: 300 }, handler: async () => ({}) });
    await startPod([job('kept')]); // the old version
    await startPod([job('kept'), job('added')]); // the new one, with a job the old one does not know
    // Both re-register every 600 ms: over 2 s, 'added' must never be missing.
    const missing: number[] = [];
    const started = Date.now();
    while (Date.now() - started < 2_000) {
      const names = (await inspector.getJobSchedulers()).map((scheduler) => scheduler.key);
      if (!names.includes('added')) missing.push(Date.now() - started);
      await sleep(50); // the sampling interval
    }
    expect(missing).toEqual([]);
  });

  it('when a pod closes during a run, then the handler is told to stop and close waits for it', async () => {
    const events: string[] = [];
    let started = false;
    const pod = await startPod([
      {
        name: 'batches',
        schedule: { every: 60_000 },
        async handler({ signal }: JobContext) {
          started = true;
          let batches = 0;
          while (!signal.aborted) {
            batches++;
            await sleep(50);
          }
          await sleep(300); // the batch under way when the signal came
          events.push('handler returned');
          return { batches };
        },
      },
    ]);
    await waitUntil(() => started, { what: 'the run to start' });

    await pod.close();
    events.push('closed');

    expect(events).toEqual(['handler returned', 'closed']);
    const [completed] = await inspector.getCompleted();
    expect(completed?.returnvalue.batches).toBeGreaterThan(0);
  });
});
