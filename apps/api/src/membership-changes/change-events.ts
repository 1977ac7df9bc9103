import type { Membership, MembershipChange, Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import { membershipRef } from '../memberships/membership-ref';

/**
 * membership.plan_change_requested, once per change: recorded by whoever first learns that the
 * provider took the change (the request after its provider call, or an invoice or expiry
 * notification about it that came first), which stamps provider_applied_at. Call with the
 * membership locked; returns whether it recorded it.
 */
export async function announceRequested(tx: Tx, membership: Membership, change: MembershipChange): Promise<boolean> {
  const claimed = await tx.membershipChange.updateMany({
    where: { id: change.id, providerAppliedAt: null },
    data: { providerAppliedAt: new Date() },
  });
  if (claimed.count === 0 || change.kind !== 'plan_change') return false;
  await recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.plan_change_requested',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      change_id: change.id,
      from_plan_id: change.fromPlanId,
      to_plan_id: change.toPlanId,
      from_price_cents: change.fromPriceCents,
      to_price_cents: change.toPriceCents,
      currency: membership.currency,
      when: change.timing,
      effective_at: change.effectiveAt.toISOString(),
      requested_by: change.requestedBy,
      actor_user_id: change.actorKeyId,
    },
  });
  return true;
}

/**
 * Ends a pending plan change (cancelled when withdrawn, failed when it could not be paid) and
 * records membership.plan_change_cancelled, once: the status guard lets one caller through.
 */
export async function cancelPendingChange(
  tx: Tx,
  membership: Membership,
  change: MembershipChange,
  reason: 'withdrawn' | 'payment_failed' | 'membership_ended',
  actorKeyId: string | null,
): Promise<boolean> {
  const ended = await tx.membershipChange.updateMany({
    where: { id: change.id, status: 'pending' },
    data: { status: reason === 'payment_failed' ? 'failed' : 'cancelled', resolvedAt: new Date() },
  });
  // A price change is the operator's, announced by price_change_scheduled: it ends silently.
  if (ended.count === 0 || change.kind !== 'plan_change') return ended.count > 0;
  await recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.plan_change_cancelled',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      change_id: change.id,
      to_plan_id: change.toPlanId,
      reason,
      actor_user_id: actorKeyId,
    },
  });
  return true;
}
