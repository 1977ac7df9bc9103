import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { allowancePeriodAt, remainingAfter, usedInPeriod } from '../memberships/allowances';
import { membershipRef } from '../memberships/membership-ref';
import type { Operator } from '../operators/api-key-auth';
import { lockUsableMembership, usageView } from './desk-use';
import type { MembershipUsageView, UseBenefitRequest } from './membership-use-schemas';

/**
 * Staff record a use of one of the plan's benefits at the desk (a coffee, a towel): consumed at
 * once, counted against the benefit's quantity for the current period under the membership's
 * lock (two tills using the last one queue; the second is 409 allowance_exhausted), and
 * membership.benefit_used in the same transaction.
 */
export async function useBenefit(
  db: Db,
  operator: Operator,
  ids: { membershipId: string; benefitId: string },
  request: UseBenefitRequest,
): Promise<MembershipUsageView> {
  return db.$transaction(async (tx) => {
    const membership = await lockUsableMembership(tx, operator, ids.membershipId);
    const benefit = membership.plan.benefits.find((candidate) => candidate.id === ids.benefitId);
    if (!benefit) throw new AppError('benefit_not_found');
    if (request.order_id !== undefined) {
      const order = await tx.order.findFirst({ where: { id: request.order_id, tenantId: operator.tenantId } });
      if (!order) throw new AppError('order_not_found');
    }
    const now = new Date();
    const period = allowancePeriodAt(membership.plan, membership, now);
    const used = await usedInPeriod(tx, {
      membershipId: membership.id,
      kind: 'benefit',
      benefitId: benefit.id,
      period,
    });
    const remaining = remainingAfter('benefit', benefit.quantityPerPeriod, used, request.quantity, period);
    const usage = await tx.membershipUsage.create({
      data: {
        membershipId: membership.id,
        kind: 'benefit',
        status: 'consumed',
        quantity: request.quantity,
        periodKey: period.key,
        countsAt: now,
        benefitId: benefit.id,
        orderId: request.order_id ?? null,
        actorKeyId: operator.keyId,
      },
    });
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'membership.benefit_used',
      entityType: 'membership',
      entityId: membership.id,
      fields: {
        ...membershipRef(membership),
        benefit_id: benefit.id,
        benefit_name: benefit.name,
        quantity: request.quantity,
        remaining,
        period_key: period.key,
        order_id: request.order_id ?? null,
        actor_user_id: operator.keyId,
      },
    });
    return usageView(usage, remaining);
  });
}
