import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

const person = (description: string) =>
  Type.Object(
    {
      email: Type.String({ format: 'email', maxLength: 254 }),
      first_name: Type.String({ minLength: 1, maxLength: 100 }),
      last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      phone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
    },
    { additionalProperties: false, description },
  );

export const MembershipPurchaseRequest = Type.Object(
  {
    tenant: Type.String({ minLength: 1, maxLength: 100, description: "the tenant's slug, as the widget names it" }),
    plan_id: Type.String({ format: 'uuid', description: 'an active plan of the tenant' }),
    customer: person('the buyer, who owns and pays for the membership'),
    holder: Type.Optional(
      person('the person who uses the membership, when not the buyer (made or refreshed by email)'),
    ),
  },
  { additionalProperties: false, $id: 'MembershipPurchaseRequest' },
);
export type MembershipPurchaseRequest = Static<typeof MembershipPurchaseRequest>;

export const MembershipPurchaseResponse = Type.Object(
  {
    order_id: Uuid,
    membership_id: Uuid,
    plan_id: Uuid,
    billing: Type.Union([Type.Literal('fixed_term'), Type.Literal('recurring')]),
    status: Type.Literal('pending_payment', {
      description: 'the order awaits its payment; the membership is active once it is paid',
    }),
    amount_cents: Type.Integer({ minimum: 1, description: 'what is paid now: the price, or the first period' }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    customer_id: Uuid,
    holder_customer_id: Uuid,
    payment_intent_id: Type.Union([Type.String(), Type.Null()], {
      description: 'fixed-term: the PaymentIntent to confirm; null for a recurring plan',
    }),
    subscription_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'recurring: the Stripe Subscription, incomplete until its first invoice is paid; null for fixed-term',
    }),
    client_secret: Type.String({
      description: "for Stripe.js: the PaymentIntent's client secret, or the first invoice's confirmation secret",
    }),
    publishable_key: Type.String({ description: 'the Stripe publishable key to load Stripe.js with' }),
    order_token: Type.String({
      description: 'signed token for GET /api/orders/{id} as header X-Order-Token; valid for BOOKING_TOKEN_TTL_SECONDS',
    }),
    manage_token: Type.String({
      description: "the member's self-service token for the membership (X-Manage-Token); keep it with the member",
    }),
    pay_by: Type.String({ format: 'date-time', description: 'the order is cancelled if not paid by then' }),
  },
  { $id: 'MembershipPurchaseResponse' },
);
export type MembershipPurchaseResponse = Static<typeof MembershipPurchaseResponse>;

const ImportPerson = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    first_name: Type.String({ minLength: 1, maxLength: 100 }),
    last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  },
  { additionalProperties: false },
);

export const ImportRow = Type.Object(
  {
    external_ref: Type.String({
      minLength: 1,
      maxLength: 200,
      description: "the membership's reference in the system it comes from; unique per tenant",
    }),
    plan_id: Type.String({ format: 'uuid', description: 'a fixed-term plan of the tenant' }),
    customer: ImportPerson,
    holder: Type.Optional(ImportPerson),
    status: Type.Union([Type.Literal('active'), Type.Literal('expired')]),
    starts_at: Timestamp,
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', description: "default: starts_at plus the plan's term" }),
    ),
  },
  { additionalProperties: false },
);
export type ImportRow = Static<typeof ImportRow>;

export const ImportRequest = Type.Object(
  { rows: Type.Array(ImportRow, { minItems: 1, maxItems: 500 }) },
  { additionalProperties: false, $id: 'MembershipImportRequest' },
);
export type ImportRequest = Static<typeof ImportRequest>;

export const ImportRowResult = Type.Object(
  {
    external_ref: Type.String(),
    outcome: Type.Union([Type.Literal('created'), Type.Literal('skipped'), Type.Literal('failed')], {
      description: 'created: imported now; skipped: this reference was imported before; failed: see error',
    }),
    membership_id: Type.Union([Uuid, Type.Null()], { description: 'the membership of the reference; null: failed' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'failed: the error code' }),
    message: Type.Union([Type.String(), Type.Null()], { description: 'failed: why' }),
  },
  { $id: 'MembershipImportRowResult' },
);
export type ImportRowResult = Static<typeof ImportRowResult>;

export const ImportResponse = Type.Object(
  {
    created: Type.Integer({ minimum: 0 }),
    skipped: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    results: Type.Array(ImportRowResult, { description: 'one per row, in the order sent' }),
  },
  { $id: 'MembershipImportResponse' },
);
export type ImportResponse = Static<typeof ImportResponse>;
