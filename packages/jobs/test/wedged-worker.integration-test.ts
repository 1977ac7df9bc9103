import { randomUUID } from 'node:crypto';
import { createLogger } from '@booking/logging';
import { sleep, waitUntil } from '@booking/test-kit';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { selfHealingWorker, type CountRun, type SelfHealingWorker } from '../src';

// A wedged worker is alive and takes nothing, nor moves delayed jobs that come due to the waiting
// list. The stand-in here is a real BullMQ worker that was never started (`autorun: false`): from
// Redis it looks the same as one whose blocking connection a failover wedged (test/cluster shows
// the real thing end to end).

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const NAME = 'wedge-watch';
const WEDGED_AFTER_MS = 600;
const CHECK_EVERY_MS = 100;
const CONCURRENCY = 2;
/** A short job lock, for the test in which a job whose record Redis refused is let go. */
const SHORT_LOCK_MS = 3_000;
/** The watch's log lines, parsed: a replacement is logged at warn with the job it found untaken. */
let logged: { msg: string; jobId?: string }[];
const logger = createLogger('warn', 'jobs-test', {
  write: (line: string) => void logged.push(JSON.parse(line) as { msg: string; jobId?: string }),
});

let prefix: string;
let connection: Redis;
let queue: Queue;
let workers: Worker[];
let healing: SelfHealingWorker<unknown> | undefined;
let release: () => void;
/** Lets BullMQ record the `hold` jobs that ran (moveToCompleted waits for it). */
let record: () => void;
let recordGate: Promise<void>;
/** The jobs whose processor started, in order. */
let started: string[];
/** Each job run as `id@n`: n is the worker's place in `workers`. */
let ranBy: string[];
let held: Promise<void>;

beforeEach(() => {
  prefix = `test-wedge-${randomUUID()}`;
  connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue(NAME, { connection, prefix });
  workers = [];
  logged = [];
  started = [];
  ranBy = [];
  healing = undefined;
  held = new Promise((resolve) => (release = resolve));
  recordGate = new Promise((resolve) => (record = resolve));
});

afterEach(async () => {
  release();
  record();
  await healing?.close(1_000);
  await Promise.all(workers.map((worker) => worker.close(true)));
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
});

/**
 * Workers made by `selfHealingWorker`, in order, with `concurrency` 2: the first `wedged` of them
 * take nothing. A job named `hold` runs until `release` is called, and BullMQ records it as
 * completed once `record` is called too.
 */
function starter(ran: string[], wedged: number, lockDuration = 30_000): (countRun: CountRun) => Worker {
  return (countRun) => {
    const index = workers.length;
    const worker = new Worker(
      NAME,
      (job, token) =>
        countRun(job, token, async () => {
          started.push(job.id!);
          if (job.name === 'hold') {
            await held;
            const moveToCompleted = job.moveToCompleted.bind(job);
            job.moveToCompleted = async (...args) => {
              await recordGate;
              return moveToCompleted(...args);
            };
          }
          ran.push(job.id!);
          ranBy.push(`${job.id}@${index}`);
        }),
      // Idle polls of 100 ms: a pause takes effect within one (BullMQ checks it between polls).
      {
        connection,
        prefix,
        concurrency: CONCURRENCY,
        drainDelay: 0.1,
        lockDuration,
        autorun: index >= wedged,
      },
    );
    workers.push(worker);
    return worker;
  };
}

/** Until `count` jobs of the queue are active. */
async function untilActive(count: number): Promise<void> {
  await waitUntil(async () => (await queue.getActiveCount()) === count, {
    timeoutMs: 5_000,
    intervalMs: 20,
    what: () => `${count} jobs to be active`,
  });
}

/**
 * The place of `worker` in `workers` (-1 if it is none of them): compared as a number, so a failed
 * assertion prints that rather than the whole BullMQ worker.
 */
const placeOf = (worker: Worker) => workers.indexOf(worker);

/**
 * A watched worker running the `hold` job `holdId` that then takes no more (a stand-in for a wedge
 * with a job in flight), replaced once the job `waitingId` has waited a window for it.
 */
async function replacedWhileRunning(ran: string[], holdId: string, waitingId: string, lockMs?: number) {
  const healed = watch(starter(ran, 0, lockMs));
  const first = healed.current();
  await queue.add('hold', {}, { jobId: holdId });
  await untilActive(1);
  await first.pause(true);
  // Past its current poll (BullMQ checks the pause before each), so it takes nothing more.
  await sleep(1_000);
  await queue.add('tick', {}, { jobId: waitingId });
  await waitUntil(() => ran.includes(waitingId), { timeoutMs: 10_000, intervalMs: 20, what: () => 'the new worker' });
  expect([placeOf(first), placeOf(healed.current())]).toEqual([0, 1]);
  return { healed, first, replacement: healed.current() };
}

function watch(start: (countRun: CountRun) => Worker): SelfHealingWorker<unknown> {
  healing = selfHealingWorker({
    queue,
    start,
    concurrency: CONCURRENCY,
    logger,
    what: 'test worker',
    wedgedAfterMs: WEDGED_AFTER_MS,
    checkEveryMs: CHECK_EVERY_MS,
  });
  return healing;
}

describe('selfHealingWorker', () => {
  it('when its worker takes no waiting job while it has a free slot, then a new worker replaces it and runs the job', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 1));
    const wedged = healed.current();
    await queue.add('tick', {}, { jobId: 'waiting-1' });
    const addedAt = performance.now();

    await waitUntil(() => ran.length === 1, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: () => 'the waiting job to run',
    });
    expect(ran).toEqual(['waiting-1']);
    // Not before the job had waited a whole window: a worker between two polls is not wedged.
    expect(performance.now() - addedAt).toBeGreaterThanOrEqual(WEDGED_AFTER_MS);
    expect(workers.length).toBe(2);
    expect(placeOf(healed.current())).toBe(1);
    expect(logged.map((line) => line.jobId)).toEqual(['waiting-1']);
    // The wedged worker, with no job of its own running, is paused and closed at once: it takes
    // no job beside its replacement should it come unstuck, and its connection is not kept.
    expect(wedged.isPaused()).toBe(true);
    await waitUntil(() => wedged.closing !== undefined, {
      timeoutMs: 2_000,
      intervalMs: 20,
      what: () => 'the wedged worker to be closed',
    });
    expect(await healed.close(1_000)).toBe(true);
  });

  it('when its worker leaves delayed jobs that came due in the delayed set, then a new worker replaces it for the first due and runs them', async () => {
    // A scheduled job's tick and a delivery's retry wait in the delayed set: only a worker moves
    // them to the waiting list as they come due, so a wedged one leaves nothing waiting.
    const ran: string[] = [];
    const healed = watch(starter(ran, 1));
    // Added in the other order than they come due: the set is ordered by due time.
    await queue.add('tick', {}, { jobId: 'due-second', delay: 400 });
    await queue.add('tick', {}, { jobId: 'due-first', delay: 200 });
    const dueAt = performance.now() + 200;

    await waitUntil(() => ran.length === 2, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: () => 'the delayed jobs to run',
    });
    expect(ran.sort()).toEqual(['due-first', 'due-second']);
    // Not before the first had been due a whole window.
    expect(performance.now() - dueAt).toBeGreaterThanOrEqual(WEDGED_AFTER_MS);
    expect(workers.length).toBe(2);
    expect(placeOf(healed.current())).toBe(1);
    expect(logged.map((line) => line.jobId)).toEqual(['due-first']);
  });

  it('when a delayed job is not due yet, then its idle worker is not suspected however long it waits', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 0));
    const live = healed.current();
    await queue.add('tick', {}, { jobId: 'later-1', delay: WEDGED_AFTER_MS * 4 });

    await sleep(WEDGED_AFTER_MS * 3); // the job is the queue's first for three windows, and not due
    expect(workers.length).toBe(1);
    await waitUntil(() => ran.length === 1, { timeoutMs: 5_000, intervalMs: 20, what: () => 'the job to come due' });
    expect(ranBy).toEqual(['later-1@0']);
    expect(placeOf(healed.current())).toBe(placeOf(live));
    expect(logged).toEqual([]);
  });

  it('when a replaced worker comes unstuck and takes a job, then it hands the job back and the new worker runs it once', async () => {
    const ran: string[] = [];
    const { healed, first, replacement } = await replacedWhileRunning(ran, 'long-4', 'waiting-4');

    // The replaced worker comes unstuck while its replacement has no free slot for the next job.
    await replacement.pause(true);
    await sleep(1_000);
    await queue.add('tick', {}, { jobId: 'taken-back' });
    await first.resume();
    await waitUntil(async () => ((await queue.getJob('taken-back'))?.attemptsStarted ?? 0) >= 1, {
      timeoutMs: 5_000,
      intervalMs: 20,
      what: () => 'the unstuck worker to take the job',
    });
    await first.pause(true);
    await replacement.resume();

    await waitUntil(() => ran.length === 2, { timeoutMs: 5_000, intervalMs: 20, what: () => 'the job to run' });
    // Run once, by the replacement: the unstuck worker took it and gave it back unrun.
    expect(ranBy).toEqual(['waiting-4@1', 'taken-back@1']);
    release();
    record();
    expect(await healed.close(5_000)).toBe(true);
    expect(await queue.getJobState('taken-back')).toBe('completed');
  });

  it('when a replaced worker has run its job, then it is closed once BullMQ has recorded it, not before', async () => {
    const ran: string[] = [];
    const { first } = await replacedWhileRunning(ran, 'long-5', 'waiting-5');

    release();
    await waitUntil(() => ran.includes('long-5'), { timeoutMs: 5_000, intervalMs: 20, what: () => 'the job to run' });
    await sleep(300); // ran, and not recorded yet: the worker must not be closed under the record
    expect(first.closing).toBeUndefined();
    expect(await queue.getJobState('long-5')).toBe('active');
    record();
    const recordedAt = performance.now();
    await waitUntil(() => first.closing !== undefined, {
      timeoutMs: 5_000,
      intervalMs: 20,
      what: () => 'the replaced worker to be closed',
    });
    // Closed by the record, not by its lock running out.
    expect(performance.now() - recordedAt).toBeLessThan(2_000);
    expect(await queue.getJobState('long-5')).toBe('completed');
  });

  it("when Redis refuses the record of a replaced worker's job, then the worker is closed once the job's lock would have run out, and the job left to the stalled-job check", async () => {
    const ran: string[] = [];
    const { healed, first } = await replacedWhileRunning(ran, 'long-6', 'waiting-6', SHORT_LOCK_MS);
    // The job's lock lost (as in a failover): BullMQ's record of it is refused, and it stays active.
    await connection.del(`${prefix}:${NAME}:long-6:lock`);
    const releasedAt = performance.now();
    release();
    record();
    await waitUntil(() => ran.includes('long-6'), { timeoutMs: 5_000, intervalMs: 20, what: () => 'the job to run' });

    await waitUntil(() => first.closing !== undefined, {
      timeoutMs: SHORT_LOCK_MS + 5_000,
      intervalMs: 20,
      what: () => 'the replaced worker to be closed',
    });
    // Let go a lock after its processor returned, which was after the release.
    expect(performance.now() - releasedAt).toBeGreaterThanOrEqual(SHORT_LOCK_MS - 50);
    expect(await queue.getJobState('long-6')).toBe('active');
    expect(await healed.close(1_000)).toBe(true);
  });

  it('when a job outlasts the bound given to close, then close answers false', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 0));
    await queue.add('hold', {}, { jobId: 'long-7' });
    await waitUntil(() => started.includes('long-7'), {
      timeoutMs: 5_000,
      intervalMs: 20,
      what: () => 'the job to start',
    });
    const closing = performance.now();
    expect(await healed.close(300)).toBe(false);
    expect(performance.now() - closing).toBeGreaterThanOrEqual(290);
  });

  it('when its worker has no free slot, running jobs or recording them, then it is not suspected however long a job waits', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 0));
    const busy = healed.current();
    await queue.add('hold', {}, { jobId: 'long-1' });
    await queue.add('hold', {}, { jobId: 'long-2' });
    await untilActive(CONCURRENCY);
    await queue.add('tick', {}, { jobId: 'waiting-2' });

    await sleep(WEDGED_AFTER_MS * 3); // several windows in which a free slot would have been replaced
    expect(workers.length).toBe(1);
    expect(placeOf(healed.current())).toBe(placeOf(busy));
    expect(logged).toEqual([]);
    expect(await queue.getJobState('waiting-2')).toBe('waiting');
    // Run, and not recorded yet: BullMQ holds their slots until it has recorded them.
    release();
    await waitUntil(() => ran.length === 2, { timeoutMs: 5_000, intervalMs: 20, what: () => 'the jobs to run' });
    await sleep(WEDGED_AFTER_MS * 3);
    expect(workers.length).toBe(1);
    expect(logged).toEqual([]);
    record();
    await waitUntil(() => ran.length === 3, { timeoutMs: 5_000, intervalMs: 20, what: () => 'every job to run' });
    expect(ranBy).toEqual(['long-1@0', 'long-2@0', 'waiting-2@0']);
    expect(await queue.getJobState('long-1')).toBe('completed');
  });

  it('when a replaced worker still runs a job, then it finishes it under its lock, and close waits for it', async () => {
    const ran: string[] = [];
    const { healed, first } = await replacedWhileRunning(ran, 'long-3', 'waiting-3');
    expect(ranBy).toEqual(['waiting-3@1']);
    // Replaced, not closed: its job goes on.
    expect(first.closing).toBeUndefined();

    const closed = healed.close(5_000);
    await sleep(200); // close must still be waiting for the replaced worker's job
    expect(first.closing).toBeUndefined();
    release();
    record();
    expect(await closed).toBe(true);
    expect(ranBy).toEqual(['waiting-3@1', 'long-3@0']);
    // Recorded in Redis before the worker closed, not left active for the stalled-job check.
    expect(await queue.getJobState('long-3')).toBe('completed');
    expect(first.closing).toBeDefined();
  });

  it('when its worker takes jobs as they come, then it is never replaced', async () => {
    const ran: string[] = [];
    const healed = watch(starter(ran, 0));
    const live = healed.current();
    const ids = Array.from({ length: 40 }, (_, i) => `steady-${i}`);
    for (const jobId of ids) {
      await queue.add('tick', {}, { jobId });
      await sleep(WEDGED_AFTER_MS / 10); // a steady trickle over three wedge windows
    }

    await waitUntil(() => ran.length === ids.length, {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: () => 'every job to run',
    });
    expect(ran.sort()).toEqual([...ids].sort());
    expect(workers.length).toBe(1);
    expect(placeOf(healed.current())).toBe(placeOf(live));
    expect(logged).toEqual([]);
  });
});
