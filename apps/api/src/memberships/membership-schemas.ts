import { Type, type Static } from '@sinclair/typebox';
import { MEMBERSHIP_STATUSES } from '@booking/domain';

const Uuid = Type.String({ format: 'uuid' });
const NullableUuid = Type.Union([Uuid, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const Day = Type.String({ format: 'date', description: 'a calendar day, YYYY-MM-DD' });
const Cents = Type.Integer({ minimum: 0 });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper-case' });
const Status = Type.Union(
  MEMBERSHIP_STATUSES.map((status) => Type.Literal(status)),
  {
    description:
      'pending_payment → active; active ⇄ frozen; recurring: active → past_due → paused_for_payment → active when paid, or ended; fixed-term: active → expired; cancelled: never paid. expired, ended and cancelled are final',
  },
);

export const MembershipUsageView = Type.Object(
  {
    usage_id: Uuid,
    kind: Type.Union([
      Type.Literal('visit'),
      Type.Literal('guest_pass'),
      Type.Literal('benefit'),
      Type.Literal('discount'),
    ]),
    status: Type.Union([Type.Literal('reserved'), Type.Literal('consumed'), Type.Literal('released')], {
      description: 'reserved by a booking, consumed at check-in or the desk, released when the booking was cancelled',
    }),
    quantity: Type.Integer({ minimum: 1 }),
    period_key: Type.String({
      description:
        'the name of the period the use counted against when recorded (or its booking moved): `2026-11` or `term-<start date>`; counts_at decides the period it counts in',
    }),
    counts_at: Type.Union([Timestamp, Type.Null()], {
      description:
        "the instant the use counts at: a booking's uses at its slot's start (moved with a reschedule), others when recorded; its allowance period is the one containing it. Null only for a use recorded while the service was being upgraded, until its membership is next used",
    }),
    benefit_id: NullableUuid,
    booking_id: NullableUuid,
    order_id: NullableUuid,
    amount_cents: Type.Union([Cents, Type.Null()], { description: 'discount uses: the discount given' }),
    actor_user_id: NullableUuid,
    created_at: Timestamp,
    released_at: NullableTimestamp,
  },
  { $id: 'MembershipUsage' },
);

export const MembershipFreezeView = Type.Object(
  {
    freeze_id: Uuid,
    starts_on: Day,
    ends_on: Day,
    status: Type.Union([
      Type.Literal('booked'),
      Type.Literal('active'),
      Type.Literal('completed'),
      Type.Literal('cancelled'),
    ]),
    frozen_days: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'days actually frozen' }),
    fee_cents: Type.Union([Cents, Type.Null()]),
    requested_by: Type.Union([Type.Literal('member'), Type.Literal('staff')]),
    reason: NullableString,
    created_at: Timestamp,
    started_at: NullableTimestamp,
    ended_at: NullableTimestamp,
  },
  { $id: 'MembershipFreeze' },
);

export const MembershipChangeView = Type.Object(
  {
    change_id: Uuid,
    kind: Type.Union([Type.Literal('plan_change'), Type.Literal('price_change')]),
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('applied'),
      Type.Literal('cancelled'),
      Type.Literal('failed'),
    ]),
    when: Type.Union([Type.Literal('now'), Type.Literal('period_end')]),
    from_plan_id: Uuid,
    to_plan_id: Uuid,
    from_price_cents: Cents,
    to_price_cents: Cents,
    effective_at: Timestamp,
    requested_by: Type.Union([Type.Literal('member'), Type.Literal('staff')]),
    invoice_id: NullableString,
    created_at: Timestamp,
    resolved_at: NullableTimestamp,
  },
  { $id: 'MembershipChange' },
);

export const MembershipInvoiceView = Type.Object(
  {
    invoice_id: Type.String({ description: 'the Stripe invoice' }),
    billing_reason: Type.String(),
    status: Type.String({ description: "the invoice's status at Stripe when last heard of" }),
    attempt_count: Type.Integer({ minimum: 0 }),
    amount_due_cents: Cents,
    amount_paid_cents: Cents,
    currency: Currency,
    period_start: NullableTimestamp,
    period_end: NullableTimestamp,
    paid_at: NullableTimestamp,
    review_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'why the payment was not kept (paid after the membership ended: refunded automatically)',
    }),
    refunded_at: NullableTimestamp,
  },
  { $id: 'MembershipInvoice' },
);

const membershipFields = {
  membership_id: Uuid,
  plan_id: Uuid,
  billing: Type.Union([Type.Literal('fixed_term'), Type.Literal('recurring')]),
  status: Status,
  source: Type.Union([Type.Literal('online'), Type.Literal('pos'), Type.Literal('import')]),
  external_ref: NullableString,
  order_id: NullableUuid,
  customer_id: Type.String({ format: 'uuid', description: 'the owner, who pays' }),
  holder_customer_id: Type.String({ format: 'uuid', description: 'the holder, who uses it' }),
  holder_photo_id: NullableUuid,
  starts_at: NullableTimestamp,
  expires_at: Type.Union([Timestamp, Type.Null()], {
    description: 'fixed-term: the end of the term; recurring: paid through',
  }),
  price_cents: Cents,
  currency: Currency,
  subscription_id: NullableString,
  cancel_at_period_end: Type.Boolean(),
  end_requested_at: NullableTimestamp,
  ended_at: NullableTimestamp,
  end_reason: NullableString,
  grace_ends_at: Type.Union([Timestamp, Type.Null()], {
    description: 'paused for payment: when it ends unless the invoice is paid',
  }),
  created_at: Timestamp,
};

export const MembershipSummary = Type.Object(membershipFields, { $id: 'MembershipSummary' });

export const MembershipView = Type.Object(
  {
    ...membershipFields,
    usages: Type.Array(Type.Ref('MembershipUsage'), { description: 'newest first, at most 200' }),
    freezes: Type.Array(Type.Ref('MembershipFreeze')),
    changes: Type.Array(Type.Ref('MembershipChange')),
    invoices: Type.Array(Type.Ref('MembershipInvoice')),
  },
  { $id: 'Membership' },
);
export type MembershipView = Static<typeof MembershipView>;

export const MembershipList = Type.Object(
  {
    data: Type.Array(Type.Ref('MembershipSummary')),
    next_starting_after: Type.Union([Uuid, Type.Null()]),
  },
  { $id: 'MembershipList' },
);

/** The schemas the OpenAPI fragment answering memberships registers. */
export const MEMBERSHIP_VIEW_SCHEMAS = [
  MembershipUsageView,
  MembershipFreezeView,
  MembershipChangeView,
  MembershipInvoiceView,
  MembershipSummary,
  MembershipView,
  MembershipList,
];

export const MembershipsQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: '1 to 100, default 20' })),
    starting_after: Type.Optional(Uuid),
    status: Type.Optional(Status),
    plan_id: Type.Optional(Uuid),
    customer_id: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export type MembershipsQuery = Static<typeof MembershipsQuery>;
