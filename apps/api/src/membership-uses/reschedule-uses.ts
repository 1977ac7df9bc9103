import type { Tx } from '@booking/db';
import { assertMembershipAllows } from '@booking/domain';
import { lockMembership } from '../locks';
import { isInPeriod, remainingAfter, usedInPeriod, visitPeriodAt } from '../memberships/allowances';
import { placeUses } from '../memberships/place-uses';
import { assertCoversVisit } from './visit-coverage';

/**
 * A booking made with a membership moves to a slot starting at `startsAt`: the membership must
 * still cover it (in use, and running when the new slot starts), and its reserved visit and guest
 * passes move with the visit: they count at the new slot's start, in the allowance period that
 * contains it, refused (409 allowance_exhausted) when that period is not open for booking yet or
 * has no room for those coming from another period. Call after the slot locks (lock order slot →
 * membership) and before the booking points at the new slot: its uses are placed at its slot as
 * it was. No event: the visits stay reserved for the same booking (booking.rescheduled says it
 * moved).
 */
export async function moveBookingUses(
  tx: Tx,
  booking: { id: string; tenantId: string; membershipId: string | null },
  startsAt: Date,
): Promise<void> {
  if (!booking.membershipId) return;
  const membership = (await lockMembership(tx, { tenantId: booking.tenantId }, booking.membershipId))!;
  assertMembershipAllows(membership.status, 'use');
  assertCoversVisit(membership, startsAt);
  const period = visitPeriodAt(membership.plan, membership, startsAt, new Date());
  await placeUses(tx, membership.id);
  const reserved = await tx.membershipUsage.findMany({ where: { bookingId: booking.id, status: 'reserved' } });
  if (reserved.length === 0) return;
  // Uses already in the new slot's period are counted there and need no room of their own.
  const arriving = reserved.filter((use) => !(use.countsAt && isInPeriod(period, use.countsAt)));
  for (const kind of ['visit', 'guest_pass'] as const) {
    const wanted = arriving.filter((use) => use.kind === kind).reduce((sum, use) => sum + use.quantity, 0);
    if (wanted === 0) continue;
    const cap = kind === 'visit' ? membership.plan.visitsPerPeriod : membership.plan.guestPassesPerPeriod;
    const used = await usedInPeriod(tx, { membershipId: membership.id, kind, period });
    remainingAfter(kind, cap, used, wanted, period);
  }
  await tx.membershipUsage.updateMany({
    where: { id: { in: reserved.map((use) => use.id) } },
    data: { countsAt: startsAt, periodKey: period.key },
  });
}
