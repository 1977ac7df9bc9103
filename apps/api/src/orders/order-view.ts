import type { Db, Prisma, Tx } from '@booking/db';
import type { OrderView } from './order-schemas';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** What an order's view is read with: its lines, tenders and refunds, in order. */
export const ORDER_WITH_PARTS = {
  lines: { orderBy: { position: 'asc' } },
  tenders: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
  refunds: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
} satisfies Prisma.OrderInclude;

/**
 * An order as the API answers it, read with its lines, tenders and refunds. Callers scope the id
 * to the tenant (or have just locked the order in it); undefined when there is no such order.
 */
export async function loadOrderView(db: Db | Tx, orderId: string, tenantId: string): Promise<OrderView | undefined> {
  const order = await db.order.findFirst({ where: { id: orderId, tenantId }, include: ORDER_WITH_PARTS });
  return order ? orderView(order) : undefined;
}

/** The answer for an order read with ORDER_WITH_PARTS. */
export function orderView(order: Prisma.OrderGetPayload<{ include: typeof ORDER_WITH_PARTS }>): OrderView {
  return {
    order_id: order.id,
    channel: order.channel,
    kind: order.kind,
    status: order.status,
    customer_id: order.customerId,
    wallet_id: order.walletId,
    membership_id: order.membershipId,
    shift_id: order.shiftId,
    venue_id: order.venueId,
    currency: order.currency,
    discount_cents: order.discountCents,
    total_cents: order.totalCents,
    paid_cents: order.paidCents,
    refunded_cents: order.refundedCents,
    balance_due_cents: order.confirmedUnpaid ? Math.max(0, order.totalCents - order.paidCents) : 0,
    confirmed_unpaid: order.confirmedUnpaid,
    payment_intent_id: order.paymentIntentId,
    subscription_id: order.stripeSubscriptionId,
    pay_by: iso(order.payBy),
    review_reason: order.reviewReason,
    created_at: order.createdAt.toISOString(),
    paid_at: iso(order.paidAt),
    confirmed_at: iso(order.confirmedAt),
    cancelled_at: iso(order.cancelledAt),
    voided_at: iso(order.voidedAt),
    lines: order.lines.map((line) => ({
      line_id: line.id,
      type: line.type,
      sku: line.sku,
      description: line.description,
      quantity: line.quantity,
      unit_price_cents: line.unitPriceCents,
      total_cents: line.totalCents,
      wallet_id: line.walletId,
      plan_id: line.planId,
      membership_id: line.membershipId,
      returned_cents: line.returnedCents,
    })),
    tenders: order.tenders.map((tender) => ({
      tender_id: tender.id,
      type: tender.type,
      status: tender.status,
      amount_cents: tender.amountCents,
      refunded_cents: tender.refundedCents,
      wallet_id: tender.walletId,
      gift_card_id: tender.giftCardId,
      payment_reference: tender.paymentReference,
      created_at: tender.createdAt.toISOString(),
    })),
    refunds: order.refunds.map((refund) => ({
      refund_id: refund.id,
      tender_id: refund.tenderId,
      line_id: refund.lineId,
      source: refund.source,
      status: refund.status,
      amount_cents: refund.amountCents,
      debited_cents: refund.debitedCents,
      shortfall_cents: refund.shortfallCents,
      reason: refund.reason,
      provider_refund_id: refund.providerRefundId,
      created_at: refund.createdAt.toISOString(),
    })),
  };
}
