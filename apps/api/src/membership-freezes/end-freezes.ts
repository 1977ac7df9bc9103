import { lockMembershipUnlessBusy } from '../locks';
import { dayOf, formatDay, frozenDaysBy } from './freeze-dates';
import { resumeAfterFreeze, type ResumedPeriod } from './freeze-provider';
import type { FreezeJobDeps } from './start-freezes';
import { unfreeze } from './unfreeze';

const BATCH = 50;

/**
 * Ends the active freezes whose last day has passed (UTC): the freeze completed with the days it
 * froze, the membership active again with its expiry moved out, membership.unfrozen. A recurring
 * membership's subscription is resumed first, outside the transaction, with a new billing period
 * from now (idempotently, keyed by the freeze: a staff cancellation of the same freeze at the
 * same time asks Stripe the same question). A freeze whose membership ended meanwhile is closed
 * without an event.
 *
 * Safe on any number of workers at once (membership claimed SKIP LOCKED, freeze status re-read
 * under the lock). Returns how many freezes ended.
 */
export async function endFreezes(deps: FreezeJobDeps, now = new Date()): Promise<number> {
  const due = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM membership_freezes WHERE status = 'active' AND ends_on < ${formatDay(dayOf(now))}::date
    ORDER BY ends_on, id
    LIMIT ${BATCH}`;
  let changed = 0;
  for (const { id } of due) {
    try {
      if (await endFreeze(deps, id, now)) changed += 1;
    } catch (error) {
      deps.logger?.warn({ err: error, freezeId: id }, 'could not end a membership freeze');
    }
  }
  return changed;
}

async function endFreeze(deps: FreezeJobDeps, freezeId: string, now: Date): Promise<boolean> {
  const seen = await deps.db.membershipFreeze.findUniqueOrThrow({
    where: { id: freezeId },
    include: { membership: true },
  });
  let resumed: ResumedPeriod | null = null;
  if (seen.membership.billing === 'recurring' && seen.membership.status === 'frozen') {
    if (!deps.stripe) {
      deps.logger?.warn({ freezeId }, 'a recurring membership freeze waits for payments to be configured');
      return false;
    }
    resumed = await resumeAfterFreeze(deps.stripe, seen.membership, seen);
  }

  return deps.db.$transaction(async (tx) => {
    const membership = await lockMembershipUnlessBusy(tx, seen.membershipId);
    if (!membership) return false;
    const freeze = await tx.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } });
    if (freeze.status !== 'active') return false;
    if (membership.status !== 'frozen') {
      // Ended (or cancelled) while frozen: nothing to unfreeze, the freeze is simply over.
      await tx.membershipFreeze.update({
        where: { id: freezeId },
        data: { status: 'completed', frozenDays: frozenDaysBy(freeze, now), endedAt: now },
      });
      return true;
    }
    if (membership.billing === 'recurring' && !resumed) return false;
    await unfreeze(tx, membership, freeze, { status: 'completed', now, resumed });
    return true;
  });
}
