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

/**
 * Runs the worker `start` makes and replaces it when it stops taking jobs while it looks alive.
 * After a Redis Cluster failover the blocking connection a BullMQ worker duplicates from its
 * connection can stay wedged (BullMQ issues 4138 and 3088): no error, no job taken, while the
 * shared connection and the other workers go on; the queue's jobs would wait until the process
 * restarts. Wedged means: the same job stayed the queue's oldest waiting job for `wedgedAfterMs`,
 * over at least as many looks as fit in that time, and every one of them found this process's
 * worker with a free slot (`hasFreeSlot`). A look that fails (Redis away) or finds the worker
 * busy starts over, and so does a process that froze (fewer looks). Another process taking the
 * queue's jobs leaves none waiting, so a wedged worker beside it is harmless and stays until it
 * is needed. Only waiting jobs are looked at: a wedged worker also stops promoting delayed jobs
 * that come due, and those are seen once something (a new job, the schedulers registered again,
 * the sweeper) puts a job in the waiting list.
 */
export function selfHealingWorker<T>(options: {
  queue: Queue;
  start: () => Worker<T>;
  hasFreeSlot: () => boolean;
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
  let worker = options.start();
  let suspect: { jobId: string; since: number; looks: number } | null = null;
  const retiring = new Set<Promise<void>>();
  let looking = false;
  let stopped = false;

  const wedged = async (): Promise<boolean> => {
    if (!options.hasFreeSlot()) {
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

  const replace = () => {
    if (stopped) return;
    const replaced = worker;
    worker = options.start();
    logger.warn(
      { queue: queue.name, jobId: suspect?.jobId, waitedMs: Math.round(performance.now() - suspect!.since) },
      `${what} took no waiting job while it had a free slot; replaced it with a new worker`,
    );
    suspect = null;
    // Not forced: closing drops the wedged blocking connection at once, then waits for the
    // replaced worker's running jobs while it still renews their locks, so none runs twice.
    const closing: Promise<void> = replaced
      .close()
      .catch((error: unknown) => logger.warn({ err: error, queue: queue.name }, `replaced ${what} did not close`))
      .finally(() => retiring.delete(closing));
    retiring.add(closing);
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
    current: () => worker,
    async stop(withinMs) {
      stopped = true;
      clearInterval(timer);
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(retiring), new Promise((resolve) => (timeout = setTimeout(resolve, withinMs)))]);
      clearTimeout(timeout);
    },
  };
}
