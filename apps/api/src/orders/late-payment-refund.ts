import type { Prisma, Tx } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder, type LockedOrder } from '../locks';
import { providerOutcome } from '../refunds/create-refund';
import { completeOrderRefund } from './complete-order-refund';
import { releasedByFailedRefund } from './dispute-takeover';
import { flagUnlessRepaid } from './late-refund-flag';

type OrderRefund = Prisma.OrderRefundGetPayload<object>;

/** The provider refund refundLatePayment asked for this order (its metadata says so). */
export const isLatePaymentRefund = (refund: Stripe.Refund, orderId: string): boolean =>
  refund.metadata?.automatic === 'true' && refund.metadata.order_id === orderId;

/**
 * Books the provider's refund of a payment an online order could not keep as the provider
 * reports it, from the refund call's answer or from a refund notification, whichever comes
 * first. Each report moves the row at most once (the order lock, one row per provider refund):
 *
 * - the first report records it pending (source late_payment) with the amount counted in the
 *   order's refunded_cents, as an operator's refund in flight is (as far as nothing else counts
 *   it already);
 * - succeeded: completeOrderRefund settles it (refund.created), at once or on a later report;
 * - failed (or canceled), while pending: completeOrderRefund gives the amount back to what the
 *   order has not refunded, less what a dispute took over meanwhile (dispute-takeover.ts);
 * - failed after it succeeded (the card was closed meanwhile): reversed, see reverse.
 *
 * A failure leaves the payer owed, so the order is flagged for review (late-refund-flag.ts) and
 * a warn line says so, unless a dispute repaid them meanwhile.
 */
export async function bookLatePaymentRefund(
  tx: Tx,
  orderId: string,
  providerRefund: Stripe.Refund,
  logger?: Pick<Logger, 'warn'>,
): Promise<void> {
  const order = await lockOrder(tx, ANY_TENANT, orderId);
  if (!order) return;
  const booked =
    (await tx.orderRefund.findUnique({ where: { providerRefundId: providerRefund.id } })) ??
    (await reserve(tx, order, providerRefund));
  const { status } = providerOutcome(providerRefund);
  if (status === 'pending') return;
  const failed =
    booked.status === 'succeeded' && status === 'failed'
      ? await reverse(tx, order, booked)
      : (await completeOrderRefund(tx, booked.id, { status, providerRefundId: providerRefund.id })) &&
        status === 'failed';
  if (!failed || !(await flagUnlessRepaid(tx, order))) return;
  // Logged before the commit: a transaction that then fails answers the provider 500 (logged as
  // an error), and its redelivery books the failure again.
  logger?.warn(
    {
      order_id: order.id,
      refund_id: booked.id,
      provider_refund_id: providerRefund.id,
      amount_cents: booked.amountCents,
      previous_status: booked.status,
    },
    'refund of a late payment failed at the provider; order flagged for review',
  );
}

/**
 * A refund the provider reported succeeded and now reports failed gave nothing back after all:
 * it becomes failed and its amount leaves the order's refunded_cents (refund.created was sent
 * and stays: no event takes it back). Whether it moved.
 */
async function reverse(tx: Tx, order: LockedOrder, refund: OrderRefund): Promise<boolean> {
  const moved = await tx.orderRefund.updateMany({
    where: { id: refund.id, status: 'succeeded' },
    data: { status: 'failed' },
  });
  if (moved.count === 0) return false;
  const released = await releasedByFailedRefund(tx, refund, order.paidCents);
  if (released > 0) {
    await tx.order.update({ where: { id: order.id }, data: { refundedCents: { decrement: released } } });
  }
  return true;
}

async function reserve(tx: Tx, order: LockedOrder, providerRefund: Stripe.Refund) {
  const refund = await tx.orderRefund.create({
    data: {
      tenantId: order.tenantId,
      orderId: order.id,
      source: 'late_payment',
      status: 'pending',
      amountCents: providerRefund.amount,
      // Why the payment was not kept; it stays on the refund when the order is flagged later.
      reason: order.reviewReason,
      providerRefundId: providerRefund.id,
    },
  });
  // Money given back another way first (a dispute, a dashboard refund) is counted already: only
  // the rest is reserved, and releasedByFailedRefund releases no more than that.
  const reserved = Math.min(providerRefund.amount, order.paidCents - order.refundedCents);
  if (reserved > 0) {
    await tx.order.update({ where: { id: order.id }, data: { refundedCents: { increment: reserved } } });
  }
  return refund;
}
