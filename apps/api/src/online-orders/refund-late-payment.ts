import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder } from '../locks';
import { recordOrderRefund } from '../orders/record-order-refund';
import { isAlreadyRefunded } from '../payments/provider-call';

/**
 * Gives back a payment an online order could not keep (it arrived after the order was
 * cancelled, or did not match it). A retry never refunds twice: the refund is a full one, and
 * the provider refuses a second full refund of the same payment. The order keeps its status;
 * the refund is recorded with source late_payment and refund.created.
 */
export async function refundLatePayment(deps: { db: Db; stripe: Stripe }, orderId: string, paymentIntentId: string) {
  let providerRefund: Stripe.Refund | null = null;
  try {
    // No fixed idempotency key: Stripe keeps a key's first answer even when it is a 500, which
    // would block this refund for good; a second full refund is refused instead.
    providerRefund = await deps.stripe.refunds.create({
      payment_intent: paymentIntentId,
      // `automatic`: booked here, not by the refund notifications.
      metadata: { order_id: orderId, automatic: 'true', reason: 'order could not keep this payment' },
    });
  } catch (error) {
    if (!isAlreadyRefunded(error)) throw error;
    const refunds = await deps.stripe.refunds.list({ payment_intent: paymentIntentId, limit: 10 });
    providerRefund = refunds.data.find((refund) => refund.metadata?.automatic === 'true') ?? null;
  }
  if (!providerRefund) return;
  const refunded = providerRefund;

  await deps.db.$transaction(async (tx) => {
    const order = await lockOrder(tx, ANY_TENANT, orderId);
    // Concurrent redeliveries all get the same provider refund; only the first records it.
    if (!order || (await tx.orderRefund.findUnique({ where: { providerRefundId: refunded.id } }))) return;
    const refund = await tx.orderRefund.create({
      data: {
        tenantId: order.tenantId,
        orderId: order.id,
        source: 'late_payment',
        status: 'succeeded',
        amountCents: refunded.amount,
        reason: order.reviewReason,
        providerRefundId: refunded.id,
      },
    });
    await tx.order.update({ where: { id: order.id }, data: { refundedCents: { increment: refunded.amount } } });
    await recordOrderRefund(tx, {
      tenantId: order.tenantId,
      orderId: order.id,
      refundId: refund.id,
      paymentIntentId,
      amountCents: refunded.amount,
      reason: order.reviewReason,
    });
  });
}
