import type { Queue } from 'bullmq';
import type { ScheduledJob } from './scheduled-job';

/** Finished runs kept in Redis for the dashboard and for debugging, bounded by count and age. */
export const KEEP_COMPLETED = { count: 100, age: 24 * 3600 };
export const KEEP_FAILED = { count: 500, age: 7 * 24 * 3600 };

/**
 * Upserts the schedulers of `jobs`: idempotent, so every process may call this at start-up, after
 * each reconnect and on a timer, and there is still one job per tick.
 */
export async function registerSchedulers(queue: Queue, jobs: readonly ScheduledJob[]): Promise<void> {
  for (const job of jobs) {
    await queue.upsertJobScheduler(job.name, job.schedule, {
      name: job.name,
      opts: {
        attempts: job.attempts ?? 3,
        backoff: { type: 'exponential', delay: job.backoffMs ?? 1000 },
        removeOnComplete: KEEP_COMPLETED,
        removeOnFail: KEEP_FAILED,
      },
    });
  }
}

/**
 * Makes the queue's job schedulers exactly `jobs`: registers each and removes schedulers of jobs
 * no longer defined, so a renamed or deleted job leaves no ghost schedule behind. At start-up
 * only: during a rolling deploy old and new processes define different jobs, and removing each
 * other's schedulers on every round would reset them (a re-added schedule runs at once).
 */
export async function reconcileSchedulers(queue: Queue, jobs: readonly ScheduledJob[]): Promise<void> {
  await registerSchedulers(queue, jobs);
  const defined = new Set(jobs.map((job) => job.name));
  for (const scheduler of await queue.getJobSchedulers()) {
    if (!defined.has(scheduler.key)) await queue.removeJobScheduler(scheduler.key);
  }
}
