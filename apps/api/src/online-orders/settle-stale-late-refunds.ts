import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { bookLatePaymentRefund } from '../orders/late-payment-refund';

const BATCH = 50;
/** How long a late payment's refund may stay pending before Stripe is asked about it (again). */
const STALE_LATE_REFUND_MS = 24 * 60 * 60 * 1000;

/**
 * Asks Stripe about refunds of payments online orders could not keep (refundLatePayment) that are
 * still pending a day after they were booked or last asked about: their notification may never
 * come. Stripe's answer is booked as a notification's would be (bookLatePaymentRefund: settled,
 * or failed and the order flagged); one still pending is asked about again a day later. One
 * refund Stripe does not answer about, or whose booking fails, is logged and does not hold back
 * the others. Run by the cancel-unpaid-orders job after its cancellations; safe on any number of
 * pods (the booking is once per report).
 */
export async function settleStaleLateRefunds(
  deps: { db: Db; stripe: Stripe; logger?: Pick<Logger, 'warn'> },
  now = new Date(),
): Promise<void> {
  const stale = await deps.db.orderRefund.findMany({
    where: {
      source: 'late_payment',
      status: 'pending',
      updatedAt: { lte: new Date(now.getTime() - STALE_LATE_REFUND_MS) },
    },
    select: { id: true, orderId: true, providerRefundId: true, order: { select: { paymentIntentId: true } } },
    orderBy: { updatedAt: 'asc' },
    take: BATCH,
  });
  for (const row of stale) {
    // Listed by payment, as refundLatePayment finds it: at most a few refunds per payment.
    const found = await deps.stripe.refunds
      .list({ payment_intent: row.order.paymentIntentId!, limit: 10 })
      .then((refunds) => refunds.data.find((refund) => refund.id === row.providerRefundId))
      .catch((error: unknown) => {
        deps.logger?.warn({ err: error, order_id: row.orderId }, 'late payment refund: Stripe did not answer about it');
        return undefined;
      });
    try {
      await deps.db.$transaction(async (tx) => {
        if (found) await bookLatePaymentRefund(tx, row.orderId, found, deps.logger);
        // Still pending, or Stripe did not say: not asked about again before another day.
        await tx.orderRefund.updateMany({ where: { id: row.id, status: 'pending' }, data: { updatedAt: now } });
      });
    } catch (error) {
      // One refund whose booking fails must not stop the others, nor come first again on every
      // run: it is logged and put back a day, out of that transaction (which rolled back). If
      // even that fails it comes first next run, and is logged again then.
      deps.logger?.warn({ err: error, order_id: row.orderId, refund_id: row.id }, 'late payment refund: not booked');
      await deps.db.orderRefund
        .updateMany({ where: { id: row.id, status: 'pending' }, data: { updatedAt: now } })
        .catch(() => undefined);
    }
  }
}
