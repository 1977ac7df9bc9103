import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const NullableUuid = Type.Union([Uuid, Type.Null()]);

export const MemberTokens = Type.Object(
  {
    membership_id: Uuid,
    member_token: Type.String({
      description:
        'what the member shows (card, QR) or types into the booking widget as membership_token; a bearer secret, stored nowhere',
    }),
    manage_token: Type.String({
      description: "the member's self-service link token (header X-Membership-Token); a bearer secret, stored nowhere",
    }),
    expires_at: Type.String({ format: 'date-time', description: 'when both tokens stop working' }),
  },
  { $id: 'MemberTokens' },
);
export type MemberTokens = Static<typeof MemberTokens>;

export const UseBenefitRequest = Type.Object(
  {
    quantity: Type.Integer({ minimum: 1, maximum: 100, description: 'how many of the benefit are used' }),
    order_id: Type.Optional(Type.String({ format: 'uuid', description: 'the order of this tenant it was used with' })),
  },
  { additionalProperties: false, $id: 'UseBenefitRequest' },
);
export type UseBenefitRequest = Static<typeof UseBenefitRequest>;

export const UseGuestPassesRequest = Type.Object(
  {
    guest_count: Type.Integer({ minimum: 1, maximum: 50, description: 'guest passes used: one per guest' }),
    booking_id: Type.Optional(
      Type.String({ format: 'uuid', description: 'the booking of this tenant the guests came with' }),
    ),
  },
  { additionalProperties: false, $id: 'UseGuestPassesRequest' },
);
export type UseGuestPassesRequest = Static<typeof UseGuestPassesRequest>;

/** One use of a membership, as the desk routes answer it. */
export const MembershipUsageView = Type.Object(
  {
    usage_id: Uuid,
    membership_id: Uuid,
    kind: Type.Union([
      Type.Literal('visit'),
      Type.Literal('guest_pass'),
      Type.Literal('benefit'),
      Type.Literal('discount'),
    ]),
    status: Type.Union([Type.Literal('reserved'), Type.Literal('consumed'), Type.Literal('released')], {
      description: 'reserved by a booking until check-in (consumed) or cancellation (released); desk uses are consumed',
    }),
    quantity: Type.Integer({ minimum: 1 }),
    period_key: Type.String({
      description: 'the name of the period the use counted against when recorded: `2026-11` or `term-<start date>`',
    }),
    counts_at: Type.String({
      format: 'date-time',
      description:
        'the instant the use counts at (a desk use: when it was recorded); its period is the one containing it',
    }),
    benefit_id: NullableUuid,
    booking_id: NullableUuid,
    order_id: NullableUuid,
    remaining: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'left of this allowance in the period after the use; null: unlimited',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'MembershipDeskUse' },
);
export type MembershipUsageView = Static<typeof MembershipUsageView>;
