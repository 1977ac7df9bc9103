import Stripe from 'stripe';

/**
 * Whether an unpaid membership order's subscription can no longer be paid: it expired or was
 * cancelled already, or it was still incomplete and is cancelled now. A subscription whose first
 * invoice was paid (active, or anything else) is left alone: its invoice.paid notification
 * activates the membership, so the unpaid-order job must not cancel the order.
 */
export async function cancelSubscriptionAtProvider(stripe: Stripe, subscriptionId: string): Promise<boolean> {
  const subscription = await stripe.subscriptions.retrieve(subscriptionId);
  if (subscription.status === 'canceled' || subscription.status === 'incomplete_expired') return true;
  if (subscription.status !== 'incomplete') return false;
  try {
    await stripe.subscriptions.cancel(subscriptionId);
    return true;
  } catch (error) {
    if (!(error instanceof Stripe.errors.StripeInvalidRequestError)) throw error;
    // Another pod cancelled it, it expired, or it was paid meanwhile: ask again.
    const after = await stripe.subscriptions.retrieve(subscriptionId);
    return after.status === 'canceled' || after.status === 'incomplete_expired';
  }
}
