import type Stripe from 'stripe';
import { assertProviderPayment } from '../payments/provider-payment';

/**
 * The PaymentIntent metadata that marks a payment as made for a gift card sale: a till or online
 * shop selling gift cards by card creates its own PaymentIntent on the service's Stripe account
 * with `tenant_id` (the selling tenant's id) and `purpose: gift_card_sale`, and passes its id as
 * payment_reference once it has succeeded.
 */
export const GIFT_CARD_SALE_PURPOSE = 'gift_card_sale';

/** A card sale issues money's worth of gift card, so its payment must be real and for this sale. */
export function assertPaidForSale(
  stripe: Stripe | null,
  reference: string,
  sale: { tenantId: string; amountCents: number; currency: string },
): Promise<void> {
  return assertProviderPayment(stripe, reference, { ...sale, purpose: GIFT_CARD_SALE_PURPOSE });
}
