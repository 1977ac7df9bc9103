import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { TokenError, verifyToken } from '@booking/signing';
import type Stripe from 'stripe';
import type { PaymentIntentResponse } from './payment-schemas';
import { providerCall } from './provider-call';

/**
 * The tenant of the booking `token` was issued for, or 401. Runs before anything else on the
 * route, Idempotency-Key replays included: a stored answer holds the client secret.
 */
export function authenticateBookingToken(config: Config, token: string | undefined, bookingId: string): string {
  if (!token) throw new AppError('invalid_token', 'X-Booking-Token is required');
  try {
    const claims = verifyToken(config.tokenSigningSecret, 'booking', token);
    if (claims.subject !== bookingId) throw new AppError('invalid_token', 'the token is for another booking');
    return claims.tenantId;
  } catch (error) {
    if (error instanceof TokenError) throw new AppError(error.reason === 'expired' ? 'token_expired' : 'invalid_token');
    throw error;
  }
}

/**
 * The PaymentIntent that pays a held booking's total less any gift card. There is one per
 * booking: retries (and racing requests, through Stripe's own idempotency key) get the same
 * intent back.
 */
export async function createPaymentIntent(
  deps: { db: Db; config: Config; stripe: Stripe | null },
  payable: { bookingId: string; tenantId: string },
): Promise<PaymentIntentResponse> {
  if (!deps.stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');
  const booking = await deps.db.booking.findFirst({ where: { id: payable.bookingId, tenantId: payable.tenantId } });
  if (!booking) throw new AppError('booking_not_found');
  assertBookingAllows(booking.status, 'pay');

  const stripe = deps.stripe;
  const intent = await providerCall(() =>
    booking.paymentIntentId
      ? stripe.paymentIntents.retrieve(booking.paymentIntentId)
      : stripe.paymentIntents.create(
          {
            amount: booking.totalCents - booking.giftCardAppliedCents,
            currency: booking.currency.toLowerCase(),
            // Cards (wallets such as Apple Pay included) settle while the hold lasts. Methods
            // that settle days later (bank debits, vouchers) would land after the unpaid
            // booking was cancelled and its seats resold, only to be refunded.
            allowed_payment_method_types: ['card'],
            metadata: { booking_id: booking.id, tenant_id: booking.tenantId },
          },
          { idempotencyKey: `booking-${booking.id}-payment-intent` },
        ),
  );
  if (!booking.paymentIntentId) {
    await deps.db.booking.updateMany({
      where: { id: booking.id, paymentIntentId: null },
      data: { paymentIntentId: intent.id },
    });
  }
  return {
    client_secret: intent.client_secret!,
    publishable_key: deps.config.stripe.publishableKey,
    amount_cents: intent.amount,
    currency: booking.currency,
  };
}
