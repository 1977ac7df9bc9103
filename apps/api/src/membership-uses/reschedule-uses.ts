import type { Tx } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import { lockMembership } from '../locks';
import { periodKey, remainingAfter, usedInPeriod } from '../memberships/allowances';

/**
 * A booking made with a membership moves to a slot starting at `startsAt`: the membership must
 * still cover it (in use, and for a fixed term not over before the new slot starts), and its
 * reserved visit and guest passes move to the allowance period of the new slot, refused (409
 * allowance_exhausted) when that period has no room for them. Call after the slot locks (lock
 * order slot → membership). No event: the visits stay reserved for the same booking
 * (booking.rescheduled says it moved).
 */
export async function moveBookingUses(
  tx: Tx,
  booking: { id: string; tenantId: string; membershipId: string | null },
  startsAt: Date,
): Promise<void> {
  if (!booking.membershipId) return;
  const membership = (await lockMembership(tx, { tenantId: booking.tenantId }, booking.membershipId))!;
  assertMembershipAllows(membership.status, 'use');
  if (membership.billing === 'fixed_term' && membership.expiresAt && membership.expiresAt <= startsAt) {
    throw new AppError('membership_not_active', {
      status: membership.status,
      expires_at: membership.expiresAt.toISOString(),
    });
  }
  const reserved = await tx.membershipUsage.findMany({ where: { bookingId: booking.id, status: 'reserved' } });
  const period = periodKey(membership.plan, membership, startsAt);
  const moving = reserved.filter((use) => use.periodKey !== period);
  if (moving.length === 0) return;
  for (const kind of ['visit', 'guest_pass'] as const) {
    const wanted = moving.filter((use) => use.kind === kind).reduce((sum, use) => sum + use.quantity, 0);
    if (wanted === 0) continue;
    const cap = kind === 'visit' ? membership.plan.visitsPerPeriod : membership.plan.guestPassesPerPeriod;
    const used = await usedInPeriod(tx, { membershipId: membership.id, kind, periodKey: period });
    remainingAfter(kind, cap, used, wanted, period);
  }
  await tx.membershipUsage.updateMany({
    where: { id: { in: moving.map((use) => use.id) } },
    data: { periodKey: period },
  });
}
