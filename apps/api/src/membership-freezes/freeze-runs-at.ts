import type { Db } from '@booking/db';
import type { JobRunsAt } from '@booking/jobs';
import type { Logger } from '@booking/logging';
import { LIFECYCLE_JOB } from '../jobs/lifecycle-queue';
import { runLifecycleAt } from '../jobs/run-lifecycle-at';
import { addDays } from './freeze-dates';
import { RECURRING_START_LEAD_MS } from './start-freezes';

/**
 * Asks the worker to start a booked freeze when it comes due and to end it the day after its
 * last day, the moments the start and end jobs look for; their periodic ticks remain the safety
 * net. A recurring freeze starts RECURRING_START_LEAD_MS before the renewal it begins on.
 */
export async function scheduleFreezeRuns(
  deps: { db: Db; lifecycle: JobRunsAt; logger: Pick<Logger, 'warn'> },
  freezeId: string,
): Promise<void> {
  const freeze = await deps.db.membershipFreeze.findUnique({
    where: { id: freezeId },
    include: { membership: { select: { billing: true, expiresAt: true } } },
  });
  if (!freeze || freeze.status !== 'booked') return;
  const { billing, expiresAt } = freeze.membership;
  const startAt =
    billing === 'recurring' && expiresAt ? new Date(expiresAt.getTime() - RECURRING_START_LEAD_MS) : freeze.startsOn;
  await runLifecycleAt(deps, LIFECYCLE_JOB.startFreezes, startAt, `freeze-${freeze.id}-start`);
  await runLifecycleAt(deps, LIFECYCLE_JOB.endFreezes, addDays(freeze.endsOn, 1), `freeze-${freeze.id}-end`);
}
