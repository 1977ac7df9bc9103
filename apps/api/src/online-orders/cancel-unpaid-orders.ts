import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import Stripe from 'stripe';
import { ANY_TENANT, lockMembership, lockOrderUnlessBusy } from '../locks';
import { recordOrderCancelled } from './order-cancelled';
import { settleStaleLateRefunds } from './settle-stale-late-refunds';
import { cancelSubscriptionAtProvider } from '../membership-sales/cancel-subscription-order';

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
 *
 * A membership order is paid by a PaymentIntent (fixed-term) or by its subscription's first
 * invoice (recurring, pay_by 23 h 10 min after the purchase, after Stripe's own 23-hour expiry of
 * an incomplete subscription): the subscription is cancelled first (or found expired), and a
 * subscription already paid is left to its invoice.paid. The pending membership is cancelled
 * with its order.
 *
 * Each run then asks Stripe about refunds of late payments left pending for a day
 * (settleStaleLateRefunds); they are not counted in what it returns.
 */
export async function cancelUnpaidOrders(
  deps: { db: Db; stripe: Stripe | null; logger?: Logger },
  now = new Date(),
): Promise<number> {
  const due = await deps.db.order.findMany({
    where: { channel: 'online', status: 'pending_payment', payBy: { lte: now } },
    select: { id: true, paymentIntentId: true, stripeSubscriptionId: true, membershipId: true },
    orderBy: { payBy: 'asc' },
    take: BATCH,
  });
  let cancelled = 0;
  for (const order of due) {
    if (order.paymentIntentId || order.stripeSubscriptionId) {
      // Without the provider configured nothing can be asked; the order waits for it.
      if (!deps.stripe) continue;
      const stripe = deps.stripe;
      // A membership's subscription is cancelled (or found expired) before the order is. One
      // order the provider will not answer about must not hold back the others: it is logged
      // and asked about again on the next run.
      const unpayable = await (
        order.paymentIntentId
          ? cancelAtProvider(stripe, order.paymentIntentId)
          : cancelSubscriptionAtProvider(stripe, order.stripeSubscriptionId!)
      ).catch((error: unknown) => {
        deps.logger?.warn({ err: error, order_id: order.id }, 'unpaid order: the provider did not cancel its payment');
        return false;
      });
      if (!unpayable) continue;
    }
    const done = await deps.db.$transaction(async (tx) => {
      const locked = await lockOrderUnlessBusy(tx, order.id);
      if (!locked || locked.status !== 'pending_payment') return false;
      const cancelledAt = new Date();
      await tx.order.update({ where: { id: locked.id }, data: { status: 'cancelled', cancelledAt } });
      // The membership it was selling ends with it (no event of its own: order.cancelled says it).
      const membership = order.membershipId ? await lockMembership(tx, ANY_TENANT, order.membershipId) : undefined;
      if (membership?.status === 'pending_payment') {
        await tx.membership.update({
          where: { id: membership.id },
          data: { status: 'cancelled', endedAt: cancelledAt, endReason: 'unpaid' },
        });
      }
      if (locked.paymentIntentId || order.stripeSubscriptionId) {
        await recordOrderCancelled(tx, locked);
      }
      return true;
    });
    if (done) cancelled += 1;
  }
  // After the cancellations, which it must never hold back; it logs its own failures per refund.
  if (deps.stripe) await settleStaleLateRefunds({ ...deps, stripe: deps.stripe }, now);
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
