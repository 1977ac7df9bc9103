import type { Tx } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder, type LockedOrder } from '../locks';
import { providerOutcome } from '../refunds/create-refund';
import { completeOrderRefund } from './complete-order-refund';

/**
 * review_reason of an online order whose late payment could not be given back: the provider's
 * refund failed, so the payer still has not got the money and a person has to settle it.
 */
export const LATE_REFUND_FAILED = 'late_payment_refund_failed';

/** The provider refund refundLatePayment asked for this order (its metadata says so). */
export const isLatePaymentRefund = (refund: Stripe.Refund, orderId: string): boolean =>
  refund.metadata?.automatic === 'true' && refund.metadata.order_id === orderId;

/**
 * Books the provider's refund of a payment an online order could not keep as the provider
 * reports it, from the refund call's answer or from a refund notification, whichever comes
 * first. Each report moves the row at most once (the order lock, one row per provider refund):
 *
 * - the first report records it pending (source late_payment) with the amount counted in the
 *   order's refunded_cents, as an operator's refund in flight is;
 * - succeeded: completeOrderRefund settles it (refund.created), at once or on a later report;
 * - failed (or canceled): completeOrderRefund gives the amount back to what the order has not
 *   refunded, the order is flagged for review (LATE_REFUND_FAILED) and a warn line says so.
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
  const moved = await completeOrderRefund(tx, booked.id, { status, providerRefundId: providerRefund.id });
  if (!moved || status !== 'failed') return;
  await tx.order.update({ where: { id: order.id }, data: { reviewReason: LATE_REFUND_FAILED } });
  // Logged before the commit: a transaction that then fails answers the provider 500 (logged as
  // an error), and its redelivery books the failure again.
  logger?.warn(
    { order_id: order.id, refund_id: booked.id, provider_refund_id: providerRefund.id },
    'refund of a late payment failed at the provider; order flagged for review',
  );
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
  await tx.order.update({ where: { id: order.id }, data: { refundedCents: { increment: providerRefund.amount } } });
  return refund;
}
