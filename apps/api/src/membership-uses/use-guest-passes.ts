import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { allowancePeriodAt, remainingAfter, usedInPeriod } from '../memberships/allowances';
import { membershipRef } from '../memberships/membership-ref';
import type { Operator } from '../operators/api-key-auth';
import { lockUsableMembership, usageView } from './desk-use';
import type { MembershipUsageView, UseGuestPassesRequest } from './membership-use-schemas';

/**
 * Staff admit a member's guests on guest passes at the desk: consumed at once, counted against
 * the plan's guest passes for the current period under the membership's lock (so passes booked
 * online and used at the desk share one allowance and are never overdrawn), and
 * membership.guest_pass_used in the same transaction. booking_id, when given, names the
 * tenant's booking the guests came with.
 */
export async function useGuestPasses(
  db: Db,
  operator: Operator,
  membershipId: string,
  request: UseGuestPassesRequest,
): Promise<MembershipUsageView> {
  return db.$transaction(async (tx) => {
    const membership = await lockUsableMembership(tx, operator, membershipId);
    if (request.booking_id !== undefined) {
      const booking = await tx.booking.findFirst({ where: { id: request.booking_id, tenantId: operator.tenantId } });
      if (!booking) throw new AppError('booking_not_found');
    }
    const now = new Date();
    const period = allowancePeriodAt(membership.plan, membership, now);
    const used = await usedInPeriod(tx, { membershipId: membership.id, kind: 'guest_pass', period });
    const remaining = remainingAfter(
      'guest_pass',
      membership.plan.guestPassesPerPeriod,
      used,
      request.guest_count,
      period,
    );
    const usage = await tx.membershipUsage.create({
      data: {
        membershipId: membership.id,
        kind: 'guest_pass',
        status: 'consumed',
        quantity: request.guest_count,
        periodKey: period.key,
        countsAt: now,
        bookingId: request.booking_id ?? null,
        actorKeyId: operator.keyId,
      },
    });
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'membership.guest_pass_used',
      entityType: 'membership',
      entityId: membership.id,
      fields: {
        ...membershipRef(membership),
        guest_count: request.guest_count,
        remaining_guest_passes: remaining,
        booking_id: request.booking_id ?? null,
        period_key: period.key,
        actor_user_id: operator.keyId,
      },
    });
    return usageView(usage, remaining);
  });
}
