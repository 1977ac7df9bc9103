import type { Membership, MembershipPlan, PlanBenefit, Tx } from '@booking/db';
import { claimLock } from './lock-order';
import { scopedTenant, type TenantScope } from './tenant-scope';

export type LockedMembership = Membership & { plan: MembershipPlan & { benefits: PlanBenefit[] } };

/**
 * Locks a membership and reads it with its plan: every change to a membership (a use counted
 * against its allowances, a freeze, a plan change, a billing fact from the provider, a job's
 * transition) starts here, so concurrent changes queue and each sees the other's rows.
 */
export async function lockMembership(
  tx: Tx,
  scope: TenantScope,
  membershipId: string,
): Promise<LockedMembership | undefined> {
  claimLock(tx, 'membership', membershipId);
  const tenantId = scopedTenant(scope);
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM memberships
    WHERE id = ${membershipId}::uuid AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
    FOR UPDATE`;
  if (rows.length === 0) return undefined;
  return readLocked(tx, membershipId);
}

/**
 * Locks a membership unless another transaction holds it (SKIP LOCKED): for lifecycle jobs,
 * which leave a busy membership to whoever holds it and to their next run.
 */
export async function lockMembershipUnlessBusy(tx: Tx, membershipId: string): Promise<LockedMembership | undefined> {
  claimLock(tx, 'membership', membershipId);
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM memberships WHERE id = ${membershipId}::uuid FOR UPDATE SKIP LOCKED`;
  if (rows.length === 0) return undefined;
  return readLocked(tx, membershipId);
}

/** Locks the membership a provider subscription belongs to (the notification names no tenant we trust). */
export async function lockMembershipBySubscription(
  tx: Tx,
  subscriptionId: string,
): Promise<LockedMembership | undefined> {
  claimLock(tx, 'membership');
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM memberships WHERE stripe_subscription_id = ${subscriptionId} FOR UPDATE`;
  if (rows.length === 0) return undefined;
  claimLock(tx, 'membership', rows[0]!.id);
  return readLocked(tx, rows[0]!.id);
}

function readLocked(tx: Tx, membershipId: string): Promise<LockedMembership> {
  return tx.membership.findUniqueOrThrow({
    where: { id: membershipId },
    include: { plan: { include: { benefits: { orderBy: { name: 'asc' } } } } },
  });
}
