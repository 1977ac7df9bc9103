import type { Logger } from '@booking/logging';

/** What a run did, in a few numbers or words: logged with the run and kept as the job's result. */
export type JobSummary = Record<string, string | number | boolean>;

/** When a job runs: every so many milliseconds, or on a cron pattern (in `tz`, default UTC). */
export type JobSchedule = { every: number } | { pattern: string; tz?: string };

/** What a handler gets for one run (one tick, or a retry of it). */
export interface JobContext {
  /** The process's logger, tagged with the job's name. */
  logger: Logger;
  /**
   * Aborted once the process starts shutting down: a handler that works in batches stops after
   * the current one and returns what it did. The rest waits for the next tick.
   */
  signal: AbortSignal;
  /**
   * The tick: the same on every run of one tick (retries, a run again after a crash), different
   * for each tick. Usable as an idempotency key.
   */
  tickId: string;
  /** 1 on the tick's first run, 2 on its first retry, and so on. */
  attempt: number;
}

/** One kind of periodic background work. */
export interface ScheduledJob {
  /** Unique in its queue; also the id of its job scheduler in Redis, so renaming a job replaces its schedule. */
  name: string;
  schedule: JobSchedule;
  /**
   * Does the work. Must be idempotent: after a crash or a stalled worker a tick can run twice, and
   * a retry repeats whatever part of the failed run committed.
   */
  handler(context: JobContext): Promise<JobSummary>;
  /** Runs of one tick, the first included, before it counts as failed. Default 3. */
  attempts?: number;
  /** Wait before the first retry, doubling for each next one. Default 1000 ms. */
  backoffMs?: number;
  /**
   * Runs of this job at the same time across all worker processes. Default 1: a tick that comes due
   * while the previous one still runs is skipped (logged, and recorded as `{ skipped: true }`).
   */
  concurrency?: number;
}
