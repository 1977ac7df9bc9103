import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder } from '../locks';
import { bookLatePaymentRefund, isLatePaymentRefund } from '../orders/late-payment-refund';
import { flagUnlessRepaid } from '../orders/late-refund-flag';
import { refundInFull } from '../payments/refund-in-full';

/**
 * Gives back a payment an online order could not keep (it arrived after the order was
 * cancelled, or did not match it). The order keeps its status; the refund is booked as the
 * provider answers it (bookLatePaymentRefund): refund.created only once it succeeded, here or
 * when its notification says so.
 *
 * Asked for once, whoever calls (each notification of the payment does): a retry never refunds
 * twice. Once a refund is booked, a redelivery leaves it to its notifications, or, if it failed,
 * to the person the order was flagged for (the payer's card took no refund, and asking again
 * would not change that). Nor is it asked for once money went back another way (a dispute, a
 * refund in Stripe's dashboard): Stripe would refuse it, and the order is flagged
 * (late_payment_refund_failed) unless refunds gave back all of it. Before, a second full refund of the
 * same payment is refused by the provider, and the first one is found instead.
 */
export async function refundLatePayment(
  deps: { db: Db; stripe: Stripe; logger?: Pick<Logger, 'warn'> },
  orderId: string,
  paymentIntentId: string,
) {
  const order = await deps.db.order.findUnique({
    where: { id: orderId },
    select: { refundedCents: true, refunds: { where: { source: 'late_payment' }, select: { id: true }, take: 1 } },
  });
  if (!order || order.refunds.length > 0) return;
  if (order.refundedCents > 0) {
    // Stripe would refuse it. Only refunds count as repaying the payer: a dispute may still be
    // won by the merchant (late-refund-flag.ts), so the rest is left to a person.
    await deps.db.$transaction(async (tx) => {
      const locked = await lockOrder(tx, ANY_TENANT, orderId);
      if (locked) await flagUnlessRepaid(tx, locked);
    });
    return;
  }
  const providerRefund = await refundInFull(
    deps.stripe,
    paymentIntentId,
    // `automatic` with the order: the refund notifications know it as this order's late payment.
    { order_id: orderId, automatic: 'true', reason: 'order could not keep this payment' },
    (refund) => isLatePaymentRefund(refund, orderId),
  );
  if (!providerRefund) return;
  await deps.db.$transaction((tx) => bookLatePaymentRefund(tx, orderId, providerRefund, deps.logger));
}
