import type { Db, MembershipPlan, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { lockMembership, type LockedMembership } from '../locks';
import { activateMembership } from './activate-membership';

/** A membership line of a till order, as the request names it. */
export interface PosMembershipLine {
  type: 'membership';
  plan_id: string;
  customer_id: string;
  holder_customer_id?: string;
}

/**
 * The plans the order's membership lines sell, checked before the order opens: each must be the
 * tenant's (404 membership_plan_not_found), sold (409 plan_not_active), fixed-term (400
 * plan_invalid: a recurring membership is a Stripe subscription the member starts online) and in
 * the order's currency (400 plan_invalid).
 */
export async function sellablePlans(
  db: Db,
  tenantId: string,
  currency: string,
  lines: PosMembershipLine[],
): Promise<Map<string, MembershipPlan>> {
  const ids = [...new Set(lines.map((line) => line.plan_id))];
  const plans = await db.membershipPlan.findMany({ where: { id: { in: ids }, tenantId } });
  for (const id of ids) {
    const plan = plans.find((candidate) => candidate.id === id);
    if (!plan) throw new AppError('membership_plan_not_found', { plan_id: id });
    if (!plan.active) throw new AppError('plan_not_active', { plan_id: id });
    if (plan.billing !== 'fixed_term') {
      throw new AppError('plan_invalid', {
        plan_id: id,
        problems: ['a recurring plan is sold online (POST /api/orders/memberships), not at the till'],
      });
    }
    if (plan.currency !== currency) {
      throw new AppError('plan_invalid', { plan_id: id, problems: [`the plan is sold in ${plan.currency}`] });
    }
  }
  return new Map(plans.map((plan) => [plan.id, plan]));
}

/**
 * In the transaction that opens the order: one pending_payment membership (source pos) per
 * membership line, its owner and holder checked to be the tenant's customers, and the line
 * pointed at it. Settling the order activates them; voiding it cancels them.
 */
export async function createPosMemberships(
  tx: Tx,
  input: {
    tenantId: string;
    orderId: string;
    lines: { position: number; line: PosMembershipLine }[];
    plans: Map<string, MembershipPlan>;
  },
): Promise<void> {
  for (const { position, line } of input.lines) {
    const plan = input.plans.get(line.plan_id)!;
    const holderId = line.holder_customer_id ?? line.customer_id;
    const found = await tx.customer.count({
      where: { tenantId: input.tenantId, id: { in: [...new Set([line.customer_id, holderId])] } },
    });
    if (found !== new Set([line.customer_id, holderId]).size) throw new AppError('customer_not_found');
    const membership = await tx.membership.create({
      data: {
        tenantId: input.tenantId,
        planId: plan.id,
        billing: plan.billing,
        orderId: input.orderId,
        source: 'pos',
        customerId: line.customer_id,
        holderCustomerId: holderId,
        status: 'pending_payment',
        priceCents: plan.priceCents,
        currency: plan.currency,
      },
    });
    await tx.orderLine.update({
      where: { orderId_position: { orderId: input.orderId, position } },
      data: { membershipId: membership.id },
    });
  }
}

/** The memberships a till order's lines sell, locked (after the order, before its wallets). */
export async function lockOrderMemberships(
  tx: Tx,
  tenantId: string,
  lines: { type: string; membershipId: string | null }[],
): Promise<LockedMembership[]> {
  const ids = lines.flatMap((line) => (line.type === 'membership' && line.membershipId ? [line.membershipId] : []));
  const locked: LockedMembership[] = [];
  for (const id of [...new Set(ids)].sort()) {
    const membership = await lockMembership(tx, { tenantId }, id);
    if (membership) locked.push(membership);
  }
  return locked;
}

/** Settling: each membership sold by the order is active from now (membership.activated, channel pos). */
export async function activatePosMemberships(
  tx: Tx,
  orderId: string,
  memberships: LockedMembership[],
  lines: { membershipId: string | null; totalCents: number }[],
  paidAt: Date,
): Promise<void> {
  for (const membership of memberships) {
    const line = lines.find((candidate) => candidate.membershipId === membership.id);
    await activateMembership(tx, membership, {
      orderId,
      channel: 'pos',
      paidAt,
      amountCents: line?.totalCents ?? membership.priceCents,
    });
  }
}

/** Voiding: the memberships the order was selling are cancelled with it (no event, as the void). */
export async function cancelPosMemberships(tx: Tx, memberships: LockedMembership[], at: Date): Promise<void> {
  for (const membership of memberships) {
    if (membership.status !== 'pending_payment') continue;
    await tx.membership.update({
      where: { id: membership.id },
      data: { status: 'cancelled', endedAt: at, endReason: 'order_voided' },
    });
  }
}
