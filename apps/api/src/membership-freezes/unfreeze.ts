import type { MembershipFreeze, Tx } from '@booking/db';
import type { LockedMembership } from '../locks';
import { addDays, frozenDaysBy } from './freeze-dates';
import { recordUnfrozen } from './freeze-events';
import type { ResumedPeriod } from './freeze-provider';

/**
 * Ends an active freeze of a locked, frozen membership: the freeze `completed` (its last day
 * passed) or `cancelled` (ended early), with the days it actually froze; the membership active
 * again, its expiry moved out by those days (fixed-term) or to the end of the billing period the
 * resumed subscription started (recurring); membership.unfrozen. Returns the days frozen.
 */
export async function unfreeze(
  tx: Tx,
  membership: LockedMembership,
  freeze: MembershipFreeze,
  end: { status: 'completed' | 'cancelled'; now: Date; resumed: ResumedPeriod | null },
): Promise<number> {
  const frozenDays = frozenDaysBy(freeze, end.now);
  const previous = membership.expiresAt ?? end.now;
  const expiresAt = end.resumed ? end.resumed.end : addDays(previous, frozenDays);
  await tx.membershipFreeze.update({
    where: { id: freeze.id },
    data: { status: end.status, frozenDays, endedAt: end.now },
  });
  await tx.membership.update({
    where: { id: membership.id },
    data: { status: 'active', expiresAt, ...(end.resumed && { periodStart: end.resumed.start }) },
  });
  await recordUnfrozen(tx, membership, { id: freeze.id, frozenDays }, { previous, now: expiresAt });
  return frozenDays;
}
