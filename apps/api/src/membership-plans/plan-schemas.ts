import { Type, type Static, type TSchema } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper-case' });
const Billing = Type.Union([Type.Literal('fixed_term'), Type.Literal('recurring')], {
  description:
    'fixed_term: paid once for term_days or term_months; recurring: a Stripe subscription billed each interval',
});
const Interval = Type.Union([Type.Literal('month'), Type.Literal('year')]);
const AllowancePeriod = Type.Union([Type.Literal('month'), Type.Literal('term')], {
  description:
    'month: allowances renew each calendar month; term: once for the term (fixed-term) or billing period (recurring)',
});

const Benefit = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    quantity_per_period: Nullable(Type.Integer({ minimum: 1, maximum: 10_000 }), 'null: unlimited'),
  },
  { additionalProperties: false },
);

/** The fields an admin may change after creation: everything but the billing, price and interval. */
const editable = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Nullable(Type.String({ minLength: 1, maxLength: 2000 })),
  active: Type.Boolean({ description: 'inactive plans are not sold; their memberships carry on' }),
  allowance_period: AllowancePeriod,
  visits_per_period: Nullable(Type.Integer({ minimum: 0, maximum: 10_000 }), 'null: unlimited visits'),
  guest_passes_per_period: Type.Integer({ minimum: 0, maximum: 1000 }),
  member_discount_percent: Type.Integer({ minimum: 0, maximum: 100 }),
  discount_on_bookings: Type.Boolean(),
  discount_on_retail: Type.Boolean(),
  freeze_allowed: Type.Boolean(),
  freeze_min_days: Type.Integer({ minimum: 1, maximum: 3650 }),
  freeze_max_days: Type.Integer({ minimum: 1, maximum: 3650 }),
  freezes_per_year: Type.Integer({ minimum: 0, maximum: 365 }),
  freeze_notice_days: Type.Integer({ minimum: 0, maximum: 365 }),
  freeze_fee_cents: Type.Integer({ minimum: 0, maximum: 10_000_000, description: 'recurring plans only' }),
  transferable: Type.Boolean(),
  requires_photo: Type.Boolean(),
  benefits: Type.Array(Benefit, { maxItems: 50, description: 'named benefits; names are unique within a plan' }),
};

export const CreatePlanRequest = Type.Object(
  {
    name: editable.name,
    description: Type.Optional(editable.description),
    active: Type.Optional(editable.active),
    billing: Billing,
    price_cents: Type.Integer({
      minimum: 1,
      maximum: 10_000_000,
      description: 'what a new member pays: once (fixed-term) or each interval',
    }),
    currency: Currency,
    term_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3660, description: 'fixed-term: validity in days' })),
    term_months: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 120, description: 'fixed-term: validity in months (instead of days)' }),
    ),
    interval: Type.Optional(Interval),
    interval_count: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 12, description: 'recurring: billed every interval_count intervals' }),
    ),
    allowance_period: Type.Optional(editable.allowance_period),
    visits_per_period: Type.Optional(editable.visits_per_period),
    guest_passes_per_period: Type.Optional(editable.guest_passes_per_period),
    member_discount_percent: Type.Optional(editable.member_discount_percent),
    discount_on_bookings: Type.Optional(editable.discount_on_bookings),
    discount_on_retail: Type.Optional(editable.discount_on_retail),
    freeze_allowed: Type.Optional(editable.freeze_allowed),
    freeze_min_days: Type.Optional(editable.freeze_min_days),
    freeze_max_days: Type.Optional(editable.freeze_max_days),
    freezes_per_year: Type.Optional(editable.freezes_per_year),
    freeze_notice_days: Type.Optional(editable.freeze_notice_days),
    freeze_fee_cents: Type.Optional(editable.freeze_fee_cents),
    transferable: Type.Optional(editable.transferable),
    requires_photo: Type.Optional(editable.requires_photo),
    benefits: Type.Optional(editable.benefits),
  },
  { additionalProperties: false, $id: 'CreateMembershipPlanRequest' },
);
export type CreatePlanRequest = Static<typeof CreatePlanRequest>;

export const UpdatePlanRequest = Type.Partial(Type.Object(editable), {
  additionalProperties: false,
  minProperties: 1,
  $id: 'UpdateMembershipPlanRequest',
});
export type UpdatePlanRequest = Static<typeof UpdatePlanRequest>;

export const PlansQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: '1 to 100, default 20' })),
    starting_after: Type.Optional(Uuid),
    active: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  },
  { additionalProperties: false },
);
export type PlansQuery = Static<typeof PlansQuery>;

const BenefitView = Type.Object(
  {
    benefit_id: Uuid,
    name: Type.String(),
    quantity_per_period: Nullable(Type.Integer({ minimum: 1 }), 'null: unlimited'),
  },
  { $id: 'MembershipPlanBenefit' },
);

const publicFields = {
  plan_id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  billing: Billing,
  price_cents: Type.Integer({ minimum: 1 }),
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  term_days: Nullable(Type.Integer({ minimum: 1 })),
  term_months: Nullable(Type.Integer({ minimum: 1 })),
  interval: Nullable(Interval),
  interval_count: Type.Integer({ minimum: 1 }),
  allowance_period: AllowancePeriod,
  visits_per_period: Nullable(Type.Integer({ minimum: 0 }), 'null: unlimited'),
  guest_passes_per_period: Type.Integer({ minimum: 0 }),
  member_discount_percent: Type.Integer({ minimum: 0, maximum: 100 }),
  discount_on_bookings: Type.Boolean(),
  discount_on_retail: Type.Boolean(),
  freeze_allowed: Type.Boolean(),
  freeze_min_days: Type.Integer({ minimum: 1 }),
  freeze_max_days: Type.Integer({ minimum: 1 }),
  freezes_per_year: Type.Integer({ minimum: 0 }),
  freeze_notice_days: Type.Integer({ minimum: 0 }),
  freeze_fee_cents: Type.Integer({ minimum: 0 }),
  transferable: Type.Boolean(),
  requires_photo: Type.Boolean(),
  benefits: Type.Array(BenefitView),
};

export const PlanView = Type.Object(
  {
    ...publicFields,
    active: Type.Boolean(),
    stripe_product_id: Nullable(Type.String(), 'recurring: the Stripe Product; null until Stripe made it'),
    stripe_price_id: Nullable(Type.String(), 'recurring: the Price new subscriptions use; null until Stripe made it'),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'MembershipPlan' },
);
export type PlanView = Static<typeof PlanView>;

export const PlanList = Type.Object(
  { data: Type.Array(PlanView), next_starting_after: Nullable(Uuid) },
  { $id: 'MembershipPlanList' },
);
export type PlanList = Static<typeof PlanList>;

export const WidgetPlansQuery = Type.Object(
  { tenant: Type.String({ minLength: 1, maxLength: 100, description: 'tenant slug' }) },
  { additionalProperties: true },
);
export type WidgetPlansQuery = Static<typeof WidgetPlansQuery>;

export const WidgetPlan = Type.Object(publicFields, { $id: 'WidgetMembershipPlan' });
export type WidgetPlan = Static<typeof WidgetPlan>;

export const WidgetPlanList = Type.Object({ plans: Type.Array(WidgetPlan) }, { $id: 'WidgetMembershipPlanList' });
export type WidgetPlanList = Static<typeof WidgetPlanList>;

export { BenefitView };
