import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const NullableUuid = Type.Union([Uuid, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const Cents = Type.Integer({ minimum: 0 });
const Currency = Type.String({ minLength: 3, maxLength: 3 });

export const OrderLineView = Type.Object(
  {
    line_id: Uuid,
    type: Type.Union([Type.Literal('product'), Type.Literal('wallet_load'), Type.Literal('membership')]),
    sku: Type.Union([Type.String(), Type.Null()]),
    description: Type.String(),
    quantity: Type.Integer({ minimum: 1 }),
    unit_price_cents: Cents,
    total_cents: Cents,
    wallet_id: Type.Union([Uuid, Type.Null()], { description: 'the wallet a wallet_load line funds' }),
    plan_id: Type.Union([Uuid, Type.Null()], { description: 'the plan a membership line sells' }),
    membership_id: Type.Union([Uuid, Type.Null()], { description: 'the membership a membership line created' }),
    returned_cents: Type.Integer({
      minimum: 0,
      description: 'wallet_load: value taken back from the wallet by refunds of this line',
    }),
  },
  { $id: 'OrderLine' },
);

export const OrderTenderView = Type.Object(
  {
    tender_id: Uuid,
    type: Type.Union([Type.Literal('card'), Type.Literal('cash'), Type.Literal('wallet'), Type.Literal('gift_card')]),
    status: Type.Union([Type.Literal('held'), Type.Literal('captured'), Type.Literal('released')], {
      description: 'held until the order settles (captured) or is voided (released)',
    }),
    amount_cents: Type.Integer({ minimum: 1 }),
    refunded_cents: Cents,
    wallet_id: NullableUuid,
    gift_card_id: NullableUuid,
    payment_reference: Type.Union([Type.String(), Type.Null()], { description: "a card tender's PaymentIntent id" }),
    created_at: Timestamp,
  },
  { $id: 'OrderTender' },
);

export const OrderRefundView = Type.Object(
  {
    refund_id: Uuid,
    tender_id: NullableUuid,
    line_id: NullableUuid,
    source: Type.Union([
      Type.Literal('operator'),
      Type.Literal('provider'),
      Type.Literal('dispute'),
      Type.Literal('late_payment'),
      Type.Literal('void'),
    ]),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    amount_cents: Type.Integer({ minimum: 1 }),
    debited_cents: Type.Integer({ minimum: 0, description: 'value taken back from a funded wallet' }),
    shortfall_cents: Type.Integer({ minimum: 0, description: 'funded value already spent, so not taken back' }),
    reason: Type.Union([Type.String(), Type.Null()]),
    provider_refund_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'OrderRefund' },
);

/** An order as operators read it: its lines, tenders and refunds. */
export const OrderView = Type.Object(
  {
    order_id: Uuid,
    channel: Type.Union([Type.Literal('online'), Type.Literal('pos')]),
    kind: Type.Union([Type.Literal('wallet_topup'), Type.Literal('retail'), Type.Literal('membership')]),
    status: Type.Union(
      [
        Type.Literal('pending_payment'),
        Type.Literal('paid'),
        Type.Literal('cancelled'),
        Type.Literal('open'),
        Type.Literal('confirmed'),
        Type.Literal('voided'),
      ],
      { description: 'online: pending_payment → paid | cancelled; POS: open → confirmed | voided' },
    ),
    customer_id: NullableUuid,
    wallet_id: Type.Union([Uuid, Type.Null()], { description: 'the wallet an online top-up funds' }),
    membership_id: Type.Union([Uuid, Type.Null()], {
      description: 'the membership a membership order sells, or whose member discount a retail order used',
    }),
    shift_id: NullableUuid,
    venue_id: NullableUuid,
    currency: Currency,
    discount_cents: Type.Integer({ minimum: 0, description: 'taken off by the member discount; total is after it' }),
    total_cents: Cents,
    paid_cents: Type.Integer({ minimum: 0, description: 'online: the payment received; POS: tenders captured' }),
    refunded_cents: Cents,
    balance_due_cents: Type.Integer({ minimum: 0, description: 'total - paid, for a confirmed unpaid order' }),
    confirmed_unpaid: Type.Boolean({ description: 'a manager confirmed it without full payment' }),
    payment_intent_id: Type.Union([Type.String(), Type.Null()]),
    subscription_id: Type.Union([Type.String(), Type.Null()], {
      description: 'a recurring membership order: the Stripe Subscription its first invoice belongs to',
    }),
    pay_by: Type.Union([Timestamp, Type.Null()], { description: 'online: cancelled if unpaid by then' }),
    review_reason: Type.Union([Type.String(), Type.Null()], {
      description:
        'why the order needs a look: a payment it did not keep (paid_after_cancelled, payment_mismatch, ...: refunded automatically), or late_payment_refund_failed when that refund failed at Stripe',
    }),
    created_at: Timestamp,
    paid_at: NullableTimestamp,
    confirmed_at: NullableTimestamp,
    cancelled_at: NullableTimestamp,
    voided_at: NullableTimestamp,
    lines: Type.Array(Type.Ref('OrderLine')),
    tenders: Type.Array(Type.Ref('OrderTender')),
    refunds: Type.Array(Type.Ref('OrderRefund')),
  },
  { $id: 'Order' },
);
export type OrderView = Static<typeof OrderView>;
export type OrderLineView = Static<typeof OrderLineView>;
export type OrderTenderView = Static<typeof OrderTenderView>;
export type OrderRefundView = Static<typeof OrderRefundView>;

/** The schemas an OpenAPI fragment answering orders registers (the Order and what it refers to). */
export const ORDER_VIEW_SCHEMAS = [OrderLineView, OrderTenderView, OrderRefundView, OrderView];

export const OrdersQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: '1 to 100, default 20' })),
    starting_after: Type.Optional(Uuid),
    status: Type.Optional(
      Type.Union(['pending_payment', 'paid', 'cancelled', 'open', 'confirmed', 'voided'].map((s) => Type.Literal(s))),
    ),
    kind: Type.Optional(Type.Union([Type.Literal('wallet_topup'), Type.Literal('retail'), Type.Literal('membership')])),
    channel: Type.Optional(Type.Union([Type.Literal('online'), Type.Literal('pos')])),
    customer_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export type OrdersQuery = Static<typeof OrdersQuery>;

export const OrderList = Type.Object(
  {
    data: Type.Array(Type.Ref('Order'), { description: 'newest first' }),
    next_starting_after: Type.Union([Uuid, Type.Null()], { description: 'null on the last page' }),
  },
  { $id: 'OrderList' },
);

export const RefundOrderRequest = Type.Object(
  {
    amount_cents: Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'the money to give back' }),
    tender_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'till orders: the tender the money goes back through (default: the order’s only captured tender)',
      }),
    ),
    line_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'till orders: a wallet_load line whose funding is taken back from its wallet as well',
      }),
    ),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    allow_shortfall: Type.Optional(
      Type.Boolean({
        description:
          'admin: refund the money even when part of the funded value was already spent; the shortfall is recorded and wallet.refund_review_required fires',
      }),
    ),
    shift_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'cash tenders: the open shift the cash is paid out of (default: the order’s shift, if still open)',
      }),
    ),
  },
  { additionalProperties: false, $id: 'RefundOrderRequest' },
);
export type RefundOrderRequest = Static<typeof RefundOrderRequest>;
