import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous, bookingToken } from '../openapi/openapi-security';
import { PaymentIntentResponse, StripeEvent, StripeWebhookResponse } from './payment-schemas';

const notConfigured = 'this deployment takes no card payments (STRIPE_SECRET_KEY or STRIPE_WEBHOOK_SECRET unset)';

export const paymentsOpenApi: OpenApiFeature = {
  tag: { name: 'Payments', description: "Card payments of held bookings through Stripe, and Stripe's notifications." },
  operations: [
    {
      method: 'post',
      path: '/api/embed/bookings/{id}/payment-intent',
      operationId: 'createPaymentIntent',
      summary: 'Create (or, on retry, return) the PaymentIntent paying a held booking',
      description:
        "There is one PaymentIntent per booking: retries get the same one. The booking is confirmed when Stripe's payment_intent.succeeded notification arrives.",
      access: bookingToken,
      parameters: [uuidPathParam('the booking id, as the booking token names it')],
      responses: { 200: ok("The client secret for the payment provider's browser library", PaymentIntentResponse) },
      errors: {
        booking_not_found: 'no such booking (also for an id that is not a uuid)',
        booking_not_payable: 'the booking is not held: already confirmed, cancelled or refunded',
        payment_provider_error:
          'Stripe refused the PaymentIntent, e.g. an amount under its minimum charge (detail: provider_code, message)',
        service_unavailable:
          "Stripe did not answer, failed, refused the service's key or rate-limited it, or PostgreSQL or Redis did not answer in time; retry with the same Idempotency-Key",
        payments_not_configured: notConfigured,
      },
      idempotency: 'Scoped to the route and the client address',
    },
    {
      method: 'post',
      path: '/api/payments/stripe/webhook',
      operationId: 'receiveStripeEvent',
      summary: 'Stripe notifications: payment_intent.succeeded confirms the booking once',
      description:
        "Called by Stripe, not by clients. The signature covers the raw bytes of the body, which are read as they come (any Content-Type). Each event is handled once; Stripe's retries of it change nothing.",
      access: anonymous,
      parameters: [
        {
          name: 'Stripe-Signature',
          in: 'header',
          required: true,
          schema: { type: 'string' },
          description: "Stripe's signature of the raw body with STRIPE_WEBHOOK_SECRET",
        },
      ],
      requestBody: {
        schema: StripeEvent,
        description: 'A Stripe event, signed by Stripe',
        example: {
          id: 'evt_1QxYz2AbCdEfGh',
          type: 'payment_intent.succeeded',
          data: { object: { id: 'pi_3QxYz2AbCdEfGh', object: 'payment_intent', status: 'succeeded' } },
        },
      },
      responses: { 200: ok('Handled, or ignored when of another type', StripeWebhookResponse) },
      errors: {
        invalid_body: 'the body is not encoded as its Content-Encoding says',
        invalid_signature: 'Stripe-Signature is missing or does not match the body',
        payments_not_configured: notConfigured,
        payment_provider_error:
          'a membership billing event, and Stripe refused to read the subscription again; Stripe redelivers it',
        service_unavailable:
          'a membership billing event, and Stripe did not answer when read again; Stripe redelivers it',
      },
    },
  ],
  schemas: [PaymentIntentResponse, StripeEvent, StripeWebhookResponse],
};
