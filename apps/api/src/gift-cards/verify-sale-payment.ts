import { AppError } from '@booking/domain';
import type Stripe from 'stripe';

/**
 * The PaymentIntent metadata that marks a payment as made for a gift card sale. This service
 * creates PaymentIntents only for bookings (metadata booking_id and tenant_id); a till or online
 * shop selling gift cards by card creates its own PaymentIntent on the service's Stripe account
 * with `tenant_id` (the selling tenant's id) and `purpose: gift_card_sale`, and passes its id as
 * payment_reference once it has succeeded.
 */
export const GIFT_CARD_SALE_PURPOSE = 'gift_card_sale';

/**
 * A card sale issues money's worth of gift card, so its payment must be real and must be for
 * this very sale: a PaymentIntent made for a gift card sale of `tenantId` (not a booking's, not
 * another tenant's), succeeded for exactly this amount and currency, with nothing refunded.
 * Without the provider configured there is nothing to check it against, and card sales are
 * refused.
 */
export async function assertPaidForSale(
  stripe: Stripe | null,
  reference: string,
  sale: { tenantId: string; amountCents: number; currency: string },
): Promise<void> {
  if (!stripe)
    throw new AppError('payments_not_configured', 'card sales are verified with Stripe; STRIPE_SECRET_KEY is not set');
  const intent = await retrieveIntent(stripe, reference);
  const metadata = intent.metadata ?? {};
  // A booking's payment confirms that booking; selling a card with it would spend it twice.
  if (metadata.booking_id !== undefined || metadata.purpose === 'booking') {
    throw new AppError('payment_reference_invalid', "the payment is a booking's");
  }
  // One message for both: whether a payment belongs to another tenant is not ours to tell.
  if (metadata.tenant_id !== sale.tenantId || metadata.purpose !== GIFT_CARD_SALE_PURPOSE) {
    throw new AppError(
      'payment_reference_invalid',
      `the payment was not made for a gift card sale of this tenant (metadata tenant_id and purpose=${GIFT_CARD_SALE_PURPOSE})`,
    );
  }
  if (intent.status !== 'succeeded') {
    throw new AppError('payment_reference_invalid', `the payment is ${intent.status}, not succeeded`);
  }
  if (intent.amount_received !== sale.amountCents || intent.currency.toUpperCase() !== sale.currency) {
    throw new AppError('payment_reference_invalid', {
      message: 'the payment does not match the sale',
      paid_cents: intent.amount_received,
      currency: intent.currency.toUpperCase(),
    });
  }
  // Any refund, even one still pending or later failed: the buyer asked for the money back.
  const refunds = await stripe.refunds.list({ payment_intent: intent.id, limit: 1 });
  if (refunds.data.length > 0) throw new AppError('payment_reference_invalid', 'the payment has been refunded');
}

async function retrieveIntent(stripe: Stripe, reference: string): Promise<Stripe.PaymentIntent> {
  try {
    return await stripe.paymentIntents.retrieve(reference);
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) {
      throw new AppError('payment_reference_invalid', 'no such payment at the provider');
    }
    throw error;
  }
}
