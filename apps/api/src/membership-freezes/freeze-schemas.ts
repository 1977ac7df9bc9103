import { Type, type Static } from '@sinclair/typebox';

const Day = (description: string) => Type.String({ format: 'date', description });
const Reason = Type.String({ minLength: 1, maxLength: 500, description: 'why, in a few words' });

export const BookFreezeRequest = Type.Object(
  {
    starts_on: Day('the first day frozen, YYYY-MM-DD (UTC)'),
    ends_on: Day('the last day frozen, YYYY-MM-DD (UTC), on or after starts_on'),
    reason: Type.Optional(Reason),
  },
  { additionalProperties: false, $id: 'BookFreezeRequest' },
);
export type BookFreezeRequest = Static<typeof BookFreezeRequest>;

export const CancelFreezeRequest = Type.Object(
  { reason: Type.Optional(Reason) },
  { additionalProperties: false, $id: 'CancelFreezeRequest' },
);
export type CancelFreezeRequest = Static<typeof CancelFreezeRequest>;
