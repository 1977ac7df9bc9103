import type { DemoTenant } from '@booking/db';
import request from 'supertest';
import type { TestApp } from './app';
import { createBooking, type BookingOptions, type CreatedBooking } from './bookings';
import { signedPaymentSucceededEvent, type FakePaymentIntent, type FakeStripe } from './fake-stripe';

export const TEST_WEBHOOK_SECRET = 'whsec_test';

/** Settings that point the app's real Stripe SDK at a fake Stripe (or any address). */
export const stripeEnv = (apiBase: string, webhookSecret = TEST_WEBHOOK_SECRET): Record<string, string> => ({
  STRIPE_SECRET_KEY: 'sk_test_x',
  STRIPE_PUBLISHABLE_KEY: 'pk_test_x',
  STRIPE_WEBHOOK_SECRET: webhookSecret,
  STRIPE_API_BASE: apiBase,
});

/** Posts a signed Stripe event to the app's webhook, as Stripe delivers it. */
export const deliverStripeEvent = (t: TestApp, signed: { payload: string; signature: string }) =>
  request(t.app)
    .post('/api/payments/stripe/webhook')
    .set('Content-Type', 'application/json')
    .set('Stripe-Signature', signed.signature)
    .send(signed.payload);

/**
 * Pays a held booking by card end to end: its PaymentIntent, the fake marking it paid, and the
 * signed payment_intent.succeeded. Fails unless the webhook accepted it.
 */
export async function payByCard(
  t: TestApp,
  fake: FakeStripe,
  booked: { booking_id: string; booking_token: string },
  ip: string,
  webhookSecret = TEST_WEBHOOK_SECRET,
): Promise<FakePaymentIntent> {
  const pi = await request(t.app)
    .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
    .set('X-Forwarded-For', ip)
    .set('X-Booking-Token', booked.booking_token);
  if (pi.status !== 200) throw new Error(`payment intent failed: ${pi.status} ${JSON.stringify(pi.body)}`);
  const intent = fake.succeed((pi.body.client_secret as string).split('_secret_')[0]!);
  const paid = await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: webhookSecret }));
  if (paid.status !== 200) throw new Error(`payment failed: ${paid.status} ${JSON.stringify(paid.body)}`);
  return intent;
}

/**
 * A booking paid by card through the fake Stripe (after any gift card part): held, paid, and
 * `confirmed`; fails the test if the payment does not confirm it.
 */
export async function cardPaidBooking(
  t: TestApp,
  fake: FakeStripe,
  tenant: DemoTenant,
  options: BookingOptions & { webhookSecret?: string } = {},
): Promise<CreatedBooking & { intent: FakePaymentIntent }> {
  const booked = await createBooking(t, tenant, options);
  const intent = await payByCard(t, fake, booked, booked.ip, options.webhookSecret);
  const { status } = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
  if (status !== 'confirmed') throw new Error(`payment did not confirm the booking: ${status}`);
  return { ...booked, status, intent };
}
