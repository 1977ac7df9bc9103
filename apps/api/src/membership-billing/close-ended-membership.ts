import type { Membership, Tx } from '@booking/db';
import { cancelPendingChange } from '../membership-changes/change-events';
import { recordFreezeCancelled } from '../membership-freezes/freeze-events';

/**
 * What an ended membership still had open ends with it, in the transaction that ends it: a
 * pending plan change is cancelled (membership.plan_change_cancelled, reason membership_ended;
 * a price change silently), a booked or running freeze is cancelled
 * (membership.freeze_cancelled, reason membership_ended). Nothing of it reaches Stripe: the
 * subscription is over. Call with the membership locked.
 */
export async function closeEndedMembership(tx: Tx, membership: Membership, endedAt: Date): Promise<void> {
  const changes = await tx.membershipChange.findMany({ where: { membershipId: membership.id, status: 'pending' } });
  for (const change of changes) await cancelPendingChange(tx, membership, change, 'membership_ended', null);

  const freezes = await tx.membershipFreeze.findMany({
    where: { membershipId: membership.id, status: { in: ['booked', 'active'] } },
  });
  for (const freeze of freezes) {
    const frozenDays =
      freeze.status === 'active' && freeze.startedAt
        ? Math.max(0, Math.floor((endedAt.getTime() - freeze.startedAt.getTime()) / 86_400_000))
        : 0;
    const cancelled = await tx.membershipFreeze.updateMany({
      where: { id: freeze.id, status: freeze.status },
      data: { status: 'cancelled', frozenDays, endedAt },
    });
    if (cancelled.count === 0) continue;
    await recordFreezeCancelled(tx, membership, {
      freezeId: freeze.id,
      was: freeze.status === 'active' ? 'active' : 'booked',
      frozenDays,
      reason: 'membership_ended',
      actorKeyId: null,
    });
  }
}
