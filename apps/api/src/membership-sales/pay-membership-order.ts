import type { Tx } from '@booking/db';
import type Stripe from 'stripe';
import { ANY_TENANT, lockMembership, type LockedOrder } from '../locks';
import { refuseOrderPayment } from '../online-orders/refuse-order-payment';
import { activateMembership } from './activate-membership';

/**
 * `payment_intent.succeeded` for a fixed-term membership order, in the caller's transaction with
 * the order locked and the notification claimed in provider_events: the order is paid and its
 * membership activated (membership.activated), once however often or concurrently Stripe
 * notifies (a duplicate finds the order paid). A payment the order cannot keep (it came after the
 * order was cancelled, or does not match it, or the membership is no longer pending) is marked
 * for review and given back after the commit. Returns whether the payment must be refunded.
 */
export async function payMembershipOrder(
  tx: Tx,
  order: LockedOrder,
  intent: Stripe.PaymentIntent,
  paidCents: number,
  duplicate: boolean,
): Promise<boolean> {
  if (duplicate || order.status === 'paid') return order.reviewReason !== null && order.refundedCents === 0;
  const membership = order.membershipId ? await lockMembership(tx, ANY_TENANT, order.membershipId) : undefined;
  const matches = paidCents === order.totalCents && intent.currency.toUpperCase() === order.currency;
  const keepable = membership?.status === 'pending_payment' && membership.billing === 'fixed_term';

  if (order.status !== 'pending_payment' || !matches || !keepable) {
    const now = new Date();
    const cancelled = await refuseOrderPayment(tx, order, {
      intentId: intent.id,
      paidCents,
      matches,
      refusal: 'membership_not_pending',
      at: now,
    });
    if (cancelled && membership?.status === 'pending_payment') {
      await tx.membership.update({
        where: { id: membership.id },
        data: { status: 'cancelled', endedAt: now, endReason: 'payment_mismatch' },
      });
    }
    return true;
  }

  const paidAt = new Date();
  await tx.order.update({
    where: { id: order.id },
    data: { status: 'paid', paidCents, paidAt, paymentIntentId: intent.id },
  });
  await activateMembership(tx, membership, { orderId: order.id, channel: 'online', paidAt, amountCents: paidCents });
  return false;
}
