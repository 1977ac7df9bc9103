import type { Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import Stripe from 'stripe';
import { lockOrderUnlessBusy } from '../locks';

const BATCH = 50;

/**
 * Cancels online orders still unpaid after their payment window: one batch, each order in its
 * own transaction. The provider object goes first: once the PaymentIntent is cancelled nobody
 * can pay it, so the order can be cancelled without racing a payment. A PaymentIntent that has
 * already succeeded cannot be cancelled (payment_intent_unexpected_state); that order is left to
 * its payment notification, which funds it.
 *
 * Safe on any number of worker pods: the order is locked SKIP LOCKED and must still be
 * pending_payment, so each order.cancelled is recorded once. An order whose PaymentIntent was
 * never created (the provider failed at purchase) had no order.created, and is cancelled
 * without an event. Returns how many orders were cancelled.
 */
export async function cancelUnpaidOrders(deps: { db: Db; stripe: Stripe | null }, now = new Date()): Promise<number> {
  const due = await deps.db.order.findMany({
    where: { channel: 'online', status: 'pending_payment', payBy: { lte: now } },
    select: { id: true, paymentIntentId: true },
    orderBy: { payBy: 'asc' },
    take: BATCH,
  });
  let cancelled = 0;
  for (const order of due) {
    if (order.paymentIntentId) {
      // Without the provider configured nothing can be asked; the order waits for it.
      if (!deps.stripe || !(await cancelAtProvider(deps.stripe, order.paymentIntentId))) continue;
    }
    const done = await deps.db.$transaction(async (tx) => {
      const locked = await lockOrderUnlessBusy(tx, order.id);
      if (!locked || locked.status !== 'pending_payment') return false;
      await tx.order.update({ where: { id: locked.id }, data: { status: 'cancelled', cancelledAt: new Date() } });
      if (locked.paymentIntentId) {
        await recordEvent(tx, {
          tenantId: locked.tenantId,
          name: 'order.cancelled',
          entityType: 'order',
          entityId: locked.id,
          fields: {},
        });
      }
      return true;
    });
    if (done) cancelled += 1;
  }
  return cancelled;
}

/** Whether the PaymentIntent can no longer be paid: cancelled now, or before. */
async function cancelAtProvider(stripe: Stripe, paymentIntentId: string): Promise<boolean> {
  try {
    await stripe.paymentIntents.cancel(paymentIntentId);
    return true;
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'payment_intent_unexpected_state') {
      // Cancelled already (another pod, an earlier run) or paid: only the first may go on.
      const intent = await stripe.paymentIntents.retrieve(paymentIntentId);
      return intent.status === 'canceled';
    }
    throw error;
  }
}
