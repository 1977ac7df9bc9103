import type { MembershipUsage, Tx } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import { lockMembership, type LockedMembership } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import { assertHolderPhotoCaptured } from './holder-photo';
import type { MembershipUsageView } from './membership-use-schemas';
import { assertStarted } from './visit-coverage';

/**
 * Locks the tenant's membership for a use at the desk: 404 membership_not_found for another
 * tenant's (or no) membership, 409 membership_not_active unless it is active or past due, 409
 * holder_photo_required while a plan that requires a photo has none of its holder, 409
 * membership_not_active before it starts.
 */
export async function lockUsableMembership(
  tx: Tx,
  operator: Operator,
  membershipId: string,
): Promise<LockedMembership> {
  const membership = await lockMembership(tx, { tenantId: operator.tenantId }, membershipId);
  if (!membership) throw new AppError('membership_not_found');
  assertMembershipAllows(membership.status, 'use');
  assertHolderPhotoCaptured(membership);
  assertStarted(membership, new Date());
  return membership;
}

/** A desk use (it counts when it is recorded) as the desk routes answer it, with what is left of its allowance. */
export function usageView(usage: MembershipUsage, remaining: number | null): MembershipUsageView {
  return {
    usage_id: usage.id,
    membership_id: usage.membershipId,
    kind: usage.kind,
    status: usage.status,
    quantity: usage.quantity,
    period_key: usage.periodKey,
    counts_at: (usage.countsAt ?? usage.createdAt).toISOString(),
    benefit_id: usage.benefitId,
    booking_id: usage.bookingId,
    order_id: usage.orderId,
    remaining,
    created_at: usage.createdAt.toISOString(),
  };
}
