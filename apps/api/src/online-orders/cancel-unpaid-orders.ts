import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import Stripe from 'stripe';
import { ANY_TENANT, lockMembership, lockOrderUnlessBusy } from '../locks';
import { recordOrderCancelled } from './order-cancelled';
import { settleStaleLateRefunds } from './settle-stale-late-refunds';
import { cancelSubscriptionAtProvider } from '../membership-sales/cancel-subscription-order';

const BATCH = 50;
/** Batches one run claims at most: a run stays short, the rest is the next run's. */
const MAX_BATCHES = 4;
/**
 * How long an order the provider did not let go (or did not answer about) waits before it is
 * asked about again: its payment is still processing, or paid with the notification on its way,
 * and asking every run would cost a provider call per such order per minute.
 */
const RECHECK_MS = 10 * 60 * 1000;

type Deps = { db: Db; stripe: Stripe | null; logger?: Logger };
type DueOrder = {
  id: string;
  paymentIntentId: string | null;
  stripeSubscriptionId: string | null;
  membershipId: string | null;
};

/**
 * Cancels online orders still unpaid after their payment window, each in its own transaction.
 * The provider object goes first: once the PaymentIntent is cancelled nobody can pay it, so the
 * order can be cancelled without racing a payment. A PaymentIntent that has already succeeded
 * cannot be cancelled (payment_intent_unexpected_state); that order is left to its payment
 * notification, which funds it.
 *
 * Due orders are claimed a batch at a time (FOR UPDATE SKIP LOCKED), each until ten minutes on
 * (unpaid_check_after): one the provider will not let go yet (a payment processing, a success
 * whose notification is late, the provider failing) is then not asked about again before that,
 * by any run on any pod, and never holds back the orders behind it. Orders never claimed come
 * first, oldest pay_by first, so the run queued at an order's pay_by cancels it at once however
 * many orders wait to be asked again. A run claims at most MAX_BATCHES batches, fewer when the
 * worker shuts down (`signal`).
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
export async function cancelUnpaidOrders(deps: Deps & { signal?: AbortSignal }, now = new Date()): Promise<number> {
  let cancelled = 0;
  for (let batch = 0; batch < MAX_BATCHES && !deps.signal?.aborted; batch += 1) {
    const due = await claimDueOrders(deps.db, now);
    for (const order of due) {
      if (await cancelOrder(deps, order)) cancelled += 1;
    }
    if (due.length < BATCH) break;
  }
  // After the cancellations, which it must never hold back; it logs its own failures per refund.
  if (deps.stripe) await settleStaleLateRefunds({ ...deps, stripe: deps.stripe }, now);
  return cancelled;
}

/** The next due orders, each claimed until RECHECK_MS on; claimed ones are not due again before then. */
async function claimDueOrders(db: Db, now: Date): Promise<DueOrder[]> {
  const rows = await db.$queryRaw<
    {
      id: string;
      payment_intent_id: string | null;
      stripe_subscription_id: string | null;
      membership_id: string | null;
    }[]
  >`
    WITH due AS (
      SELECT id FROM orders
      WHERE channel = 'online' AND status = 'pending_payment' AND pay_by <= ${now}
        AND (unpaid_check_after IS NULL OR unpaid_check_after <= ${now})
      ORDER BY unpaid_check_after IS NOT NULL, pay_by
      LIMIT ${BATCH}
      FOR UPDATE SKIP LOCKED)
    UPDATE orders o SET unpaid_check_after = ${new Date(now.getTime() + RECHECK_MS)}
    FROM due WHERE o.id = due.id
    RETURNING o.id, o.payment_intent_id, o.stripe_subscription_id, o.membership_id`;
  return rows.map((row) => ({
    id: row.id,
    paymentIntentId: row.payment_intent_id,
    stripeSubscriptionId: row.stripe_subscription_id,
    membershipId: row.membership_id,
  }));
}

/** Cancels one due order, its provider object first; false when it is left for a later run. */
async function cancelOrder(deps: Deps, order: DueOrder): Promise<boolean> {
  if (order.paymentIntentId || order.stripeSubscriptionId) {
    // Without the provider configured nothing can be asked; the order waits for it.
    if (!deps.stripe) return false;
    const stripe = deps.stripe;
    // A membership's subscription is cancelled (or found expired) before the order is. One
    // order the provider will not answer about is logged, and asked about again once its claim
    // runs out.
    const unpayable = await (
      order.paymentIntentId
        ? cancelAtProvider(stripe, order.paymentIntentId)
        : cancelSubscriptionAtProvider(stripe, order.stripeSubscriptionId!)
    ).catch((error: unknown) => {
      deps.logger?.warn({ err: error, order_id: order.id }, 'unpaid order: the provider did not cancel its payment');
      return false;
    });
    if (!unpayable) return false;
  }
  return deps.db.$transaction(async (tx) => {
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
