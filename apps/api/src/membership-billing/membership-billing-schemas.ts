import { Type, type Static } from '@sinclair/typebox';

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const CancelMembershipRequest = Type.Object(
  {
    at: Type.Union([Type.Literal('period_end'), Type.Literal('now')], {
      description:
        'period_end: it runs to the end of the period paid for, then ends (a recurring subscription stops renewing); now: it ends at once, without refund of the current period',
    }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'why, for the record' })),
  },
  { additionalProperties: false, $id: 'CancelMembershipRequest' },
);
export type CancelMembershipRequest = Static<typeof CancelMembershipRequest>;

export const MembershipCancellation = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    billing: Type.Union([Type.Literal('fixed_term'), Type.Literal('recurring')]),
    status: Type.String({
      description: 'the membership status after the request: ended, or still live until period_end',
    }),
    cancel_at_period_end: Type.Boolean(),
    end_requested_at: NullableTimestamp,
    end_requested_by: Type.Union([Type.Literal('member'), Type.Literal('staff'), Type.Null()]),
    ended_at: NullableTimestamp,
    end_reason: Type.Union([Type.String(), Type.Null()]),
    expires_at: Type.Union([Timestamp, Type.Null()], {
      description: 'paid through (recurring) or the end of the term',
    }),
  },
  { additionalProperties: false, $id: 'MembershipCancellation' },
);
export type MembershipCancellation = Static<typeof MembershipCancellation>;
