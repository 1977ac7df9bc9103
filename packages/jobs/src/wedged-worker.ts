import type { Logger } from '@booking/logging';
import { DelayedError, type Job, type Queue, type Worker } from 'bullmq';

/**
 * How long one job may stay the queue's first due job (see firstDueJob), while every look finds
 * this process's worker with a free slot, before that worker counts as wedged: twice the 15 s a
 * BullMQ worker sleeps after a connection error (`runRetryDelay`), six of its idle polls
 * (`drainDelay`, 5 s). A live worker never lets that pass without taking a waiting job, and
 * moves a delayed job to the waiting list as it comes due.
 */
export const WEDGED_AFTER_MS = 30_000;

/** How often the queue's first due job is looked at (an LRANGE, then a ZCOUNT and a ZRANGE when none waits). */
const CHECK_EVERY_MS = 5_000;

export interface SelfHealingWorker<T> {
  /** The worker taking the queue's jobs now: a new one after a wedged one was replaced. */
  current(): Worker<T>;
  /**
   * Stops watching, stops every worker (the current one and those replaced) taking jobs, waits up
   * to `withinMs` for their running jobs to finish and be recorded in Redis, and closes them.
   * Resolves true when all finished in time; the rest are left to their locks.
   */
  close(withinMs: number): Promise<boolean>;
}

/**
 * Runs one of its worker's jobs: `start` wraps its processor's work in it, with the job and the
 * processor's token. A worker that is being retired hands a job it took back to the queue instead.
 */
export type CountRun = <R>(job: Job, token: string | undefined, run: () => Promise<R>) => Promise<R>;

interface Generation<T> {
  worker: Worker<T>;
  /**
   * The worker's busy slots: its jobs from the start of their processor until BullMQ has recorded
   * them as done or failed, as BullMQ holds the slot until then. A record that Redis refused (the
   * job's lock lost in a failover) never comes: such a job is let go once the lock it ran under
   * would have run out after its processor returned, as it is the stalled-job check's by then
   * (BullMQ frees its slot sooner, so a worker whose every job lost its lock is suspected up to a
   * lock later). Keyed by the token each take of a job gets, so a job taken again after a lost
   * lock is another entry; each holds the timer that lets it go, once its processor has returned.
   * A close waits for these, within its bound.
   */
  unfinished: Map<string, NodeJS.Timeout | undefined>;
  /** Takes no more jobs: replaced, or closing. */
  retired: boolean;
  /** Called whenever a job of it is finished (see whenIdle). */
  onFinished: Set<() => void>;
}

/**
 * Runs the worker `start` makes and replaces it when it stops taking jobs while it looks alive.
 * After a Redis Cluster failover the blocking connection a BullMQ worker duplicates from its
 * connection can stay wedged (BullMQ issues 4138 and 3088): no error, no job taken, while the
 * shared connection and the other workers go on; the queue's jobs would wait until the process
 * restarts. Wedged means: the same job stayed the queue's first due job (see firstDueJob) for
 * `wedgedAfterMs` after it was first seen, over as many more looks as fit in that time, and every
 * look found the worker with a free slot (fewer than `concurrency` of its jobs unfinished). A look
 * that fails or finds the worker busy starts over, and so does a process that froze (fewer
 * looks). Another process taking the queue's jobs leaves none due, so a wedged worker beside it is
 * harmless and stays until it is needed. A paused queue would look wedged; nothing pauses these
 * queues.
 */
export function selfHealingWorker<T>(options: {
  queue: Queue;
  /** Makes a worker whose processor runs each job through `countRun`. */
  start: (countRun: CountRun) => Worker<T>;
  /** The worker's `concurrency`. */
  concurrency: number;
  logger: Logger;
  /** Names the worker in the log line of a replacement. */
  what: string;
  /** WEDGED_AFTER_MS, unless given (tests). */
  wedgedAfterMs?: number;
  /** How often the queue is looked at: CHECK_EVERY_MS, unless given (tests). */
  checkEveryMs?: number;
}): SelfHealingWorker<T> {
  const { queue, logger, what, wedgedAfterMs = WEDGED_AFTER_MS, checkEveryMs = CHECK_EVERY_MS } = options;
  const looksNeeded = Math.floor(wedgedAfterMs / checkEveryMs);
  const spawn = (): Generation<T> => {
    const finished = (take: string | undefined) => {
      if (take === undefined || !generation.unfinished.has(take)) return;
      clearTimeout(generation.unfinished.get(take));
      generation.unfinished.delete(take);
      for (const callback of [...generation.onFinished]) callback();
    };
    const countRun: CountRun = async (job, token, run) => {
      const take = token ?? job.id!;
      generation.unfinished.set(take, undefined);
      try {
        if (generation.retired) {
          // Taken as the worker was stopped (a wedged wait that came unstuck): back to the queue,
          // due now, for the current worker.
          await job.moveToDelayed(Date.now(), token);
          throw new DelayedError();
        }
        return await run();
      } catch (error) {
        // BullMQ writes nothing more for a job moved to delayed: it is finished here.
        if (error instanceof DelayedError) finished(take);
        throw error;
      } finally {
        // BullMQ records the job after this returns; should Redis refuse it, it is let go later.
        if (generation.unfinished.has(take)) {
          // BullMQ fills in its default lock (30 s) when none is given.
          const lockMs = generation.worker.opts.lockDuration!;
          generation.unfinished.set(take, setTimeout(() => finished(take), lockMs).unref());
        }
      }
    };
    const generation: Generation<T> = {
      worker: options.start(countRun),
      unfinished: new Map(),
      retired: false,
      onFinished: new Set(),
    };
    // Emitted once BullMQ has recorded the job as completed or failed, with the job as taken.
    generation.worker.on('completed', (job) => finished(job.token ?? job.id));
    generation.worker.on('failed', (job) => finished(job?.token ?? job?.id));
    return generation;
  };
  let current = spawn();
  const replaced: Generation<T>[] = [];
  /** Closes of replaced workers under way: close() waits for them too. */
  const closing = new Set<Promise<void>>();
  let suspect: { jobId: string; since: number; looks: number } | null = null;
  let looking = false;
  let stopped = false;

  const wedged = async (): Promise<boolean> => {
    if (current.unfinished.size >= options.concurrency) {
      suspect = null;
      return false;
    }
    const jobId = await firstDueJob(queue);
    if (jobId === null) {
      suspect = null;
      return false;
    }
    if (suspect?.jobId !== jobId) {
      suspect = { jobId, since: performance.now(), looks: 0 };
      return false;
    }
    suspect.looks += 1;
    return suspect.looks >= looksNeeded && performance.now() - suspect.since >= wedgedAfterMs;
  };

  /** Stops `generation` taking jobs (one it takes anyway goes back to the queue); its running jobs go on under their locks. */
  const retire = (generation: Generation<T>) => {
    generation.retired = true;
    void generation.worker
      .pause(true)
      .catch((error: unknown) => logger.warn({ err: error, queue: queue.name }, `could not pause a ${what}`));
  };

  /** Resolves true once `generation` has no unfinished job, or false after `withinMs` (never, without it). */
  const whenIdle = (generation: Generation<T>, withinMs?: number) =>
    new Promise<boolean>((resolve) => {
      const timer = withinMs === undefined ? undefined : setTimeout(() => done(false), withinMs);
      const done = (idle: boolean) => {
        clearTimeout(timer);
        generation.onFinished.delete(check);
        resolve(idle);
      };
      const check = () => {
        if (generation.unfinished.size === 0) done(true);
      };
      generation.onFinished.add(check);
      check();
    });

  const replace = () => {
    if (stopped) return;
    const wedgedOne = current;
    current = spawn();
    logger.warn(
      { queue: queue.name, jobId: suspect?.jobId, waitedMs: Math.round(performance.now() - suspect!.since) },
      `${what} took no due job while it had a free slot; replaced it with a new worker`,
    );
    suspect = null;
    // Paused at once, and closed with force only once its jobs are recorded (or let go, see
    // Generation.unfinished): a close without force waits for its blocking connection to end,
    // which one stuck reconnecting never does, and one with force any sooner could cut off a
    // job's record.
    retire(wedgedOne);
    replaced.push(wedgedOne);
    void whenIdle(wedgedOne).then(() => {
      if (stopped) return; // close() closes it
      replaced.splice(replaced.indexOf(wedgedOne), 1);
      const closed = wedgedOne.worker
        .close(true)
        .catch((error: unknown) => logger.warn({ err: error, queue: queue.name }, `could not close a replaced ${what}`))
        .finally(() => closing.delete(closed));
      closing.add(closed);
    });
  };

  const look = () => {
    if (looking || stopped) return;
    looking = true;
    wedged()
      .then(
        (isWedged) => {
          if (!isWedged) return;
          try {
            replace();
          } catch (error) {
            logger.error({ err: error, queue: queue.name }, `could not replace a wedged ${what}`);
          }
        },
        // Redis away: the worker waits for it too; the watch starts over once it is back.
        () => (suspect = null),
      )
      .finally(() => (looking = false));
  };
  const timer = setInterval(look, checkEveryMs).unref();

  return {
    current: () => current.worker,
    async close(withinMs) {
      stopped = true;
      clearInterval(timer);
      const generations = [...replaced, current];
      for (const generation of generations) retire(generation);
      const finished = await Promise.all(generations.map((generation) => whenIdle(generation, withinMs)));
      // With force: every job is finished and recorded, or left to its lock; a close without
      // force would wait for a wedged blocking connection to end.
      await Promise.all([...generations.map((generation) => generation.worker.close(true)), ...closing]);
      return finished.every(Boolean);
    },
  };
}

/**
 * The job a live worker with a free slot would take next, if any is due: the queue's oldest
 * waiting job, or else the delayed job that came due first. A worker moves delayed jobs that came
 * due to the waiting list whenever it asks for a job, and an idle one wakes for the first of them
 * as it comes due; a wedged one asks for none. So the scheduled jobs' ticks and the deliveries'
 * retries, which wait in the delayed set, show a wedge even when nothing reaches the waiting list.
 * One gap: registering a cron (`pattern`) schedule again replaces its due tick with the next one,
 * so a queue of cron jobs only, registered again sooner than the window after each tick comes due,
 * would never show one due long enough. Every scheduled job here runs on an `every` schedule,
 * whose due tick, when registered again, moves to the waiting list under the same id.
 */
async function firstDueJob(queue: Queue): Promise<string | null> {
  const [oldest] = await queue.getRanges(['wait'], 0, 0, true);
  if (oldest !== undefined) return oldest;
  if ((await queue.getDelayedCount(Date.now())) === 0) return null;
  // The delayed set is ordered by when each job comes due: the first came due first.
  const [first] = await queue.getRanges(['delayed'], 0, 0, true);
  return first ?? null;
}
