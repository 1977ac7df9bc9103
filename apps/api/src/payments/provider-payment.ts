import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { providerCall } from './provider-call';

/**
 * A payment taken at the till through Stripe and presented by its PaymentIntent id: for a gift
 * card sale (`purpose: gift_card_sale`) or a POS order's card tender (`purpose: pos_order` and
 * the `order_id`). The till's own Stripe integration creates the PaymentIntent on the service's
 * account with that metadata and `tenant_id`, and passes its id once it has succeeded.
 *
 * It must be real and for this very purchase: made for `purpose` of `tenantId` (not a booking's,
 * not another tenant's, not another order's), succeeded for exactly this amount and currency,
 * with nothing refunded. Without the provider configured there is nothing to check it against.
 */
export async function assertProviderPayment(
  stripe: Stripe | null,
  reference: string,
  expected: { tenantId: string; amountCents: number; currency: string; purpose: string; orderId?: string },
): Promise<void> {
  if (!stripe)
    throw new AppError(
      'payments_not_configured',
      'card payments are verified with Stripe; STRIPE_SECRET_KEY is not set',
    );
  const intent = await retrieveIntent(stripe, reference);
  const metadata = intent.metadata ?? {};
  // A booking's payment confirms that booking; using it here would spend it twice.
  if (metadata.booking_id !== undefined || metadata.purpose === 'booking') {
    throw new AppError('payment_reference_invalid', "the payment is a booking's");
  }
  // One message for all: whether a payment belongs to another tenant is not ours to tell.
  if (
    metadata.tenant_id !== expected.tenantId ||
    metadata.purpose !== expected.purpose ||
    (expected.orderId !== undefined && metadata.order_id !== expected.orderId)
  ) {
    const order = expected.orderId !== undefined ? ' and order_id' : '';
    throw new AppError(
      'payment_reference_invalid',
      `the payment was not made for this ${expected.purpose} of this tenant (metadata tenant_id${order} and purpose=${expected.purpose})`,
    );
  }
  if (intent.status !== 'succeeded') {
    throw new AppError('payment_reference_invalid', `the payment is ${intent.status}, not succeeded`);
  }
  if (intent.amount_received !== expected.amountCents || intent.currency.toUpperCase() !== expected.currency) {
    throw new AppError('payment_reference_invalid', {
      message: 'the payment does not match the amount',
      paid_cents: intent.amount_received,
      currency: intent.currency.toUpperCase(),
    });
  }
  // Any refund, even one still pending or later failed: the buyer asked for the money back.
  const refunds = await providerCall(() => stripe.refunds.list({ payment_intent: intent.id, limit: 1 }));
  if (refunds.data.length > 0) throw new AppError('payment_reference_invalid', 'the payment has been refunded');
}

/** The PaymentIntent; Stripe away or refusing is our answer for it (providerCall), not a 500. */
async function retrieveIntent(stripe: Stripe, reference: string): Promise<Stripe.PaymentIntent> {
  return providerCall(async () => {
    try {
      return await stripe.paymentIntents.retrieve(reference);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) {
        throw new AppError('payment_reference_invalid', 'no such payment at the provider');
      }
      throw error;
    }
  });
}

/**
 * A provider payment pays for one thing: one gift card sale, one booking or one order tender, in
 * one tenant. The check spans every tenant, as the unique indexes do. Callers hold the
 * reference's advisory lock (lockSaleReference), so the second of two concurrent uses waits for
 * the first to commit and then finds it here, rather than failing on an index.
 */
export async function assertReferenceUnused(db: Db | Tx, reference: string): Promise<void> {
  const sales = await db.giftCardSale.count({ where: { paymentReference: reference } });
  const payments = await db.payment.count({ where: { providerReference: reference } });
  const tenders = await db.orderTender.count({ where: { paymentReference: reference } });
  if (sales + payments + tenders > 0) {
    throw new AppError(
      'payment_reference_used',
      'this payment_reference already paid for another sale, booking or order',
    );
  }
}
