import type { Config } from '@booking/config';
import type { Tx } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { lockMembership } from '../locks';
import { allowancePeriodAt } from '../memberships/allowances';
import { readMemberToken } from '../memberships/member-token';
import { memberDiscountCents } from './booking-uses';
import { assertHolderPhotoCaptured } from './holder-photo';
import { assertStarted } from './visit-coverage';

/**
 * The member discount a till order gets from the membership named by `token`: locked (after the
 * shift: lock order shift → membership), its token version current (else 400
 * member_token_invalid), in use (409 membership_not_active), its holder photographed if the plan
 * requires it (409 holder_photo_required), started (409 membership_not_active), and its plan
 * discounting retail (409
 * discount_not_applicable). The discount is the plan's percent of the product lines, rounded
 * down to the cent; wallet loads are stored value, never discounted.
 */
export async function retailMemberDiscount(
  tx: Tx,
  config: Config,
  tenantId: string,
  token: string,
  productTotalCents: number,
): Promise<{ membershipId: string; discountCents: number }> {
  const claims = readMemberToken(config, tenantId, token);
  const membership = await lockMembership(tx, { tenantId }, claims.membershipId);
  if (!membership || membership.tokenVersion !== claims.tokenVersion) {
    throw new AppError('member_token_invalid', 'the member token is of an earlier holder or names no membership');
  }
  assertMembershipAllows(membership.status, 'use');
  assertHolderPhotoCaptured(membership);
  assertStarted(membership, new Date());
  const { plan } = membership;
  if (plan.memberDiscountPercent === 0 || !plan.discountOnRetail) {
    throw new AppError('discount_not_applicable', "the membership's plan gives no member discount on retail orders");
  }
  return {
    membershipId: membership.id,
    discountCents: memberDiscountCents(productTotalCents, plan.memberDiscountPercent),
  };
}

/**
 * At settlement, the member discount a till order took becomes a use of its membership (kind
 * discount, consumed) with membership.discount_used about the order, in the settle transaction.
 * The discount was granted when the order was opened, so settling does not ask again whether
 * the membership is still in use. Call it after the order lock and before any wallet lock.
 */
export async function recordRetailDiscount(
  tx: Tx,
  order: {
    id: string;
    tenantId: string;
    kind: string;
    membershipId: string | null;
    discountCents: number;
    currency: string;
  },
  actorKeyId: string,
): Promise<void> {
  if (order.kind !== 'retail' || !order.membershipId || order.discountCents <= 0) return;
  const membership = await lockMembership(tx, { tenantId: order.tenantId }, order.membershipId);
  if (!membership) return;
  const { plan } = membership;
  const now = new Date();
  await tx.membershipUsage.create({
    data: {
      membershipId: membership.id,
      kind: 'discount',
      status: 'consumed',
      quantity: 1,
      periodKey: allowancePeriodAt(plan, membership, now).key,
      countsAt: now,
      orderId: order.id,
      amountCents: order.discountCents,
      actorKeyId,
    },
  });
  await recordEvent(tx, {
    tenantId: order.tenantId,
    name: 'membership.discount_used',
    entityType: 'order',
    entityId: order.id,
    fields: {
      membership_id: membership.id,
      plan_id: membership.planId,
      booking_id: null,
      order_id: order.id,
      // The plan's percent now; a plan whose discount was withdrawn since the order was opened
      // still reports the discount given (at least 1, as the event requires).
      discount_percent: Math.max(1, plan.memberDiscountPercent),
      discount_cents: order.discountCents,
      currency: order.currency,
    },
  });
}
