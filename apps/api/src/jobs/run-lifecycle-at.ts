import type { JobRunsAt } from '@booking/jobs';
import type { Logger } from '@booking/logging';
import type { LIFECYCLE_JOB } from './lifecycle-queue';

type LifecycleJobName = (typeof LIFECYCLE_JOB)[keyof typeof LIFECYCLE_JOB];

/**
 * Asks the lifecycle worker to run `name` at `at`, after the change that makes it due has
 * committed. Never fails the request: if Redis does not take it, the job's periodic tick does
 * the same work a little later.
 */
export async function runLifecycleAt(
  deps: { lifecycle: JobRunsAt; logger: Pick<Logger, 'warn'> },
  name: LifecycleJobName,
  at: Date,
  key: string,
): Promise<void> {
  try {
    await deps.lifecycle.runAt(name, at, key);
  } catch (error) {
    deps.logger.warn({ err: error, job: name, key }, 'exact-time job run not queued; its periodic tick will do it');
  }
}
