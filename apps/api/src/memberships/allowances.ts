import type { Membership, MembershipPlan, Tx, UsageKind } from '@booking/db';
import { AppError } from '@booking/domain';

/**
 * The allowance period a use on `at` counts against. `month` plans count by the calendar month
 * of the use (UTC); `term` plans by the membership's current term or paid billing period, keyed
 * by its start, so a renewal starts a fresh allowance.
 */
export function periodKey(
  plan: Pick<MembershipPlan, 'allowancePeriod'>,
  membership: Pick<Membership, 'periodStart' | 'startsAt' | 'createdAt'>,
  at: Date,
): string {
  if (plan.allowancePeriod === 'month') return at.toISOString().slice(0, 7);
  const start = membership.periodStart ?? membership.startsAt ?? membership.createdAt;
  return `term-${start.toISOString().slice(0, 10)}`;
}

/**
 * What the membership has used of one allowance in a period: reserved and consumed uses,
 * counted from the rows (never a counter). Call it with the membership locked, so two uses of
 * the last allowance queue and the second sees the first.
 */
export async function usedInPeriod(
  tx: Tx,
  where: { membershipId: string; kind: UsageKind; periodKey: string; benefitId?: string },
): Promise<number> {
  const { _sum } = await tx.membershipUsage.aggregate({
    _sum: { quantity: true },
    where: {
      membershipId: where.membershipId,
      kind: where.kind,
      periodKey: where.periodKey,
      ...(where.benefitId && { benefitId: where.benefitId }),
      status: { in: ['reserved', 'consumed'] },
    },
  });
  return _sum.quantity ?? 0;
}

/**
 * What is left of an allowance of `cap` (null: unlimited) after `wanted` more, refusing with 409
 * allowance_exhausted when it would go below zero. Returns null for an unlimited allowance.
 */
export function remainingAfter(
  kind: UsageKind,
  cap: number | null,
  used: number,
  wanted: number,
  period: string,
): number | null {
  if (cap === null) return null;
  const remaining = cap - used - wanted;
  if (remaining < 0) {
    throw new AppError('allowance_exhausted', { kind, remaining: Math.max(0, cap - used), period_key: period });
  }
  return remaining;
}
