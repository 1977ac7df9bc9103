import { Type, type Static } from '@sinclair/typebox';

export const PaymentIntentResponse = Type.Object(
  {
    client_secret: Type.String({ description: "for the payment provider's browser library (Stripe.js)" }),
    publishable_key: Type.String(),
    amount_cents: Type.Integer({ minimum: 0, description: 'booking total less any gift card applied' }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
  },
  { $id: 'PaymentIntentResponse' },
);
export type PaymentIntentResponse = Static<typeof PaymentIntentResponse>;

/**
 * A Stripe event as Stripe sends it. Only what the route reads is described: Stripe's own
 * documentation has the rest, which is accepted as it comes.
 */
export const StripeEvent = Type.Object(
  {
    id: Type.String({ description: "Stripe's event id (evt_...); each is handled once" }),
    type: Type.String({
      description:
        'payment_intent.succeeded confirms the booking; charge.refunded, refund.updated and refund.failed settle refunds; any other type is acknowledged and ignored',
    }),
    data: Type.Object({ object: Type.Object({}, { description: 'the PaymentIntent, Charge or Refund' }) }),
  },
  { $id: 'StripeEvent' },
);

export const StripeWebhookResponse = Type.Object({ received: Type.Literal(true) }, { $id: 'StripeWebhookResponse' });
export type StripeWebhookResponse = Static<typeof StripeWebhookResponse>;
