import { Type, type Static } from '@sinclair/typebox';

export const HoldRequest = Type.Object(
  {
    slot_id: Type.String({ format: 'uuid' }),
    experience_id: Type.String({ format: 'uuid' }),
    seats: Type.Integer({ minimum: 1, maximum: 200 }),
  },
  { additionalProperties: false, $id: 'HoldRequest' },
);
export type HoldRequest = Static<typeof HoldRequest>;

export const HoldResponse = Type.Object(
  {
    hold_id: Type.String({ format: 'uuid' }),
    expires_at: Type.String({ format: 'date-time', description: 'HOLD_TTL_SECONDS (10 minutes) after creation' }),
  },
  { $id: 'HoldResponse' },
);
export type HoldResponse = Static<typeof HoldResponse>;
