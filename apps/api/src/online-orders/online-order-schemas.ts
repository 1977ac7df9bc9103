import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

export const WalletTopupRequest = Type.Object(
  {
    tenant: Type.String({ minLength: 1, maxLength: 100, description: "the tenant's slug, as the widget names it" }),
    amount_cents: Type.Integer({ minimum: 100, maximum: 100_000_000, description: 'the value to add to the wallet' }),
    currency: Type.String({
      pattern: '^[A-Z]{3}$',
      description: 'ISO 4217 code, upper-case: the wallet is per currency',
    }),
    customer: Type.Object(
      {
        email: Type.String({ format: 'email', maxLength: 254 }),
        first_name: Type.String({ minLength: 1, maxLength: 100 }),
        last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        phone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'WalletTopupRequest' },
);
export type WalletTopupRequest = Static<typeof WalletTopupRequest>;

const orderStatus = Type.Union([Type.Literal('pending_payment'), Type.Literal('paid'), Type.Literal('cancelled')], {
  description: 'pending_payment until the payment succeeds (paid: the wallet is funded) or the window ends (cancelled)',
});

export const WalletTopupResponse = Type.Object(
  {
    order_id: Uuid,
    status: orderStatus,
    amount_cents: Type.Integer({ minimum: 1 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    customer_id: Uuid,
    wallet_id: Uuid,
    payment_intent_id: Type.String({ description: 'the Stripe PaymentIntent to confirm with Stripe.js' }),
    client_secret: Type.String({ description: "the PaymentIntent's client secret, for Stripe.js" }),
    publishable_key: Type.String({ description: 'the Stripe publishable key to load Stripe.js with' }),
    order_token: Type.String({
      description: 'signed token for GET /api/orders/{id} as header X-Order-Token; valid for BOOKING_TOKEN_TTL_SECONDS',
    }),
    pay_by: Type.String({ format: 'date-time', description: 'the order is cancelled if not paid by then' }),
  },
  { $id: 'WalletTopupResponse' },
);
export type WalletTopupResponse = Static<typeof WalletTopupResponse>;

export const BuyerOrder = Type.Object(
  {
    order_id: Uuid,
    kind: Type.Union([Type.Literal('wallet_topup'), Type.Literal('membership')]),
    status: orderStatus,
    amount_cents: Type.Integer({ minimum: 1 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    wallet_id: Type.Union([Uuid, Type.Null()], { description: 'wallet_topup: the wallet funded; null otherwise' }),
    membership_id: Type.Union([Uuid, Type.Null()], {
      description: 'membership: the membership sold (active once paid); null otherwise',
    }),
    plan_id: Type.Union([Uuid, Type.Null()], { description: 'membership: the plan sold; null otherwise' }),
    pay_by: Timestamp,
    paid_at: Type.Union([Timestamp, Type.Null()]),
    cancelled_at: Type.Union([Timestamp, Type.Null()]),
  },
  { $id: 'BuyerOrder' },
);
export type BuyerOrder = Static<typeof BuyerOrder>;
