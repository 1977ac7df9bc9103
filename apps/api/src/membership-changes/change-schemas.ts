import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const Cents = Type.Integer({ minimum: 0 });

export const PlanChangeRequest = Type.Object(
  {
    to_plan_id: Uuid,
    when: Type.Union([Type.Literal('period_end'), Type.Literal('now')], {
      description:
        'period_end: the next renewal bills the new plan and it applies then; now: an upgrade invoiced at once (the difference for the rest of the period), applied when that invoice is paid',
    }),
  },
  { additionalProperties: false, $id: 'PlanChangeRequest' },
);
export type PlanChangeRequest = Static<typeof PlanChangeRequest>;

export const PriceChangeRequest = Type.Object(
  {
    price_cents: Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'the new price per billing period' }),
    effective_on: Type.String({
      format: 'date',
      description: 'the first day (UTC) of the new price, tomorrow or later: renewals from then on bill it',
    }),
  },
  { additionalProperties: false, $id: 'PriceChangeRequest' },
);
export type PriceChangeRequest = Static<typeof PriceChangeRequest>;

export const PriceChangeResult = Type.Object(
  {
    plan_id: Uuid,
    from_price_cents: Cents,
    to_price_cents: Cents,
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    effective_at: Timestamp,
    stripe_price_id: Type.String({ description: 'the new Stripe Price on the plan’s product' }),
    scheduled: Type.Array(Type.Object({ membership_id: Uuid, change_id: Uuid }, { additionalProperties: false }), {
      description: 'the live recurring memberships that move to the new price at their first renewal from effective_at',
    }),
    skipped: Type.Array(
      Type.Object(
        {
          membership_id: Uuid,
          reason: Type.Literal('change_pending', {
            description: 'the membership has a plan or price change pending; it keeps its price',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { $id: 'PriceChangeResult' },
);
export type PriceChangeResult = Static<typeof PriceChangeResult>;
