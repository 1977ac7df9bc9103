import type { Queue } from 'bullmq';
import type { ScheduledJob } from './scheduled-job';

/** Finished runs kept in Redis for the dashboard and for debugging, bounded by count and age. */
export const KEEP_COMPLETED = { count: 100, age: 24 * 3600 };
export const KEEP_FAILED = { count: 500, age: 7 * 24 * 3600 };

/**
 * Makes the queue's job schedulers exactly `jobs`: upserts each (idempotent, so every process
 * may call this at start-up and after each reconnect and there is still one job per tick) and
 * removes schedulers of jobs no longer defined, so a renamed or deleted job leaves no ghost
 * schedule behind.
 */
export async function reconcileSchedulers(queue: Queue, jobs: readonly ScheduledJob[]): Promise<void> {
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
  const defined = new Set(jobs.map((job) => job.name));
  for (const scheduler of await queue.getJobSchedulers()) {
    if (!defined.has(scheduler.key)) await queue.removeJobScheduler(scheduler.key);
  }
}
