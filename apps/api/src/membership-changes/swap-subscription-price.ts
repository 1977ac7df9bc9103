import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { providerCall } from '../payments/provider-call';

/**
 * Puts the subscription's one item on `priceId`. `none` changes the price the next renewal bills
 * and charges nothing now; `always_invoice` (an upgrade made now) invoices the difference for
 * the rest of the period at once, and with `pending_if_incomplete` the provider keeps the old
 * price until that invoice is paid (or drops the update when it expires unpaid). Returns the
 * subscription as the provider answered.
 */
export async function swapSubscriptionPrice(
  stripe: Stripe,
  subscriptionId: string,
  priceId: string,
  proration: 'none' | 'always_invoice',
  idempotencyKey: string,
): Promise<Stripe.Subscription> {
  const subscription = await providerCall(() => stripe.subscriptions.retrieve(subscriptionId));
  const item = subscription.items.data[0];
  if (!item) throw new AppError('change_not_allowed', 'the subscription has no item to change');
  return providerCall(() =>
    stripe.subscriptions.update(
      subscriptionId,
      {
        items: [{ id: item.id, price: priceId }],
        proration_behavior: proration,
        ...(proration === 'always_invoice' && { payment_behavior: 'pending_if_incomplete' as const }),
      },
      { idempotencyKey },
    ),
  );
}
