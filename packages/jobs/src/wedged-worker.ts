import type { Logger } from '@booking/logging';
import type { Queue, Worker } from 'bullmq';

/**
 * How long one job may stay the oldest waiting job of a queue, while every look finds this
 * process's worker with a free slot, before that worker counts as wedged: twice the 15 s a
 * BullMQ worker sleeps after a connection error (`runRetryDelay`), six of its idle polls
 * (`drainDelay`, 5 s). A live worker never lets that pass without taking a waiting job.
 */
export const WEDGED_AFTER_MS = 30_000;

/** How often the queue's oldest waiting job is looked at (one LRANGE and one HGETALL). */
const CHECK_EVERY_MS = 5_000;

export interface SelfHealingWorker<T> {
  /** The worker taking the queue's jobs now: a new one after a wedged one was replaced. */
  current(): Worker<T>;
  /**
   * Stops watching (before the current worker is closed) and waits, up to `withinMs`, for the
   * workers it replaced to finish their running jobs and close.
   */
  stop(withinMs: number): Promise<void>;
}

/** Runs `run` as one of its worker's jobs in progress: `start` wraps its processor in it. */
export type CountRun = <R>(run: () => Promise<R>) => Promise<R>;

interface Generation<T> {
  worker: Worker<T>;
  running: number;
  /** Set once replaced: called when its last running job ends. */
  idle?: () => void;
}

/**
 * Runs the worker `start` makes and replaces it when it stops taking jobs while it looks alive.
 * After a Redis Cluster failover the blocking connection a BullMQ worker duplicates from its
 * connection can stay wedged (BullMQ issues 4138 and 3088): no error, no job taken, while the
 * shared connection and the other workers go on; the queue's jobs would wait until the process
 * restarts. Wedged means: the same job stayed the queue's oldest waiting job for `wedgedAfterMs`
 * after it was first seen, over as many more looks as fit in that time, and every look found the
 * worker with a free slot (fewer than `concurrency` of its jobs running). A look that fails or
 * finds the worker busy starts over, and so does a process that froze (fewer looks). Another
 * process taking the queue's jobs leaves none waiting, so a wedged worker beside it is harmless
 * and stays until it is needed. Only waiting jobs are looked at: a wedged worker also stops
 * promoting delayed jobs that come due, and those are seen once something (a new job, the
 * schedulers registered again, the sweeper) puts a job in the waiting list. A paused queue would
 * look wedged; nothing pauses these queues.
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
    const countRun: CountRun = async (run) => {
      generation.running += 1;
      try {
        return await run();
      } finally {
        generation.running -= 1;
        if (generation.running === 0) generation.idle?.();
      }
    };
    const generation: Generation<T> = { worker: options.start(countRun), running: 0 };
    return generation;
  };
  let current = spawn();
  let suspect: { jobId: string; since: number; looks: number } | null = null;
  const retiring = new Set<Promise<void>>();
  let looking = false;
  let stopped = false;

  const wedged = async (): Promise<boolean> => {
    if (current.running >= options.concurrency) {
      suspect = null;
      return false;
    }
    const [oldest] = await queue.getJobs(['wait'], 0, 0, true);
    if (!oldest?.id) {
      suspect = null;
      return false;
    }
    if (suspect?.jobId !== oldest.id) {
      suspect = { jobId: oldest.id, since: performance.now(), looks: 0 };
      return false;
    }
    suspect.looks += 1;
    return suspect.looks >= looksNeeded && performance.now() - suspect.since >= wedgedAfterMs;
  };

  /**
   * Retires `replaced`: paused at once (it takes no job should it come unstuck), its running jobs
   * finish under their locks, then it is closed with force. A close without force would first
   * wait for its blocking connection to end, which a connection stuck reconnecting never does.
   */
  const retire = (replaced: Generation<T>) => {
    const idle = new Promise<void>((resolve) => {
      replaced.idle = resolve;
      if (replaced.running === 0) resolve();
    });
    const closed: Promise<void> = replaced.worker
      .pause(true)
      .then(() => idle)
      .then(() => replaced.worker.close(true))
      .catch((error: unknown) => logger.warn({ err: error, queue: queue.name }, `replaced ${what} did not close`))
      .finally(() => retiring.delete(closed));
    retiring.add(closed);
  };

  const replace = () => {
    if (stopped) return;
    const replaced = current;
    current = spawn();
    logger.warn(
      { queue: queue.name, jobId: suspect?.jobId, waitedMs: Math.round(performance.now() - suspect!.since) },
      `${what} took no waiting job while it had a free slot; replaced it with a new worker`,
    );
    suspect = null;
    retire(replaced);
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
    async stop(withinMs) {
      stopped = true;
      clearInterval(timer);
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(retiring), new Promise((resolve) => (timeout = setTimeout(resolve, withinMs)))]);
      clearTimeout(timeout);
    },
  };
}
