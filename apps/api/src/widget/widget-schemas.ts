import { Type, type Static } from '@sinclair/typebox';

export const WidgetQuery = Type.Object(
  {
    tenant: Type.String({ minLength: 1, maxLength: 100, description: 'tenant slug' }),
    experience: Type.String({ minLength: 1, maxLength: 100, description: 'experience slug' }),
  },
  { additionalProperties: true },
);
export type WidgetQuery = Static<typeof WidgetQuery>;

export const Experience = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    slug: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    base_price_cents: Type.Integer({ minimum: 0 }),
    min_party_size: Type.Integer({ minimum: 1 }),
    max_party_size: Type.Integer({ minimum: 1 }),
    duration_minutes: Type.Integer({ minimum: 1 }),
    requires_waiver: Type.Boolean(),
  },
  { $id: 'Experience' },
);

export const Slot = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    starts_at: Type.String({ format: 'date-time' }),
    ends_at: Type.String({ format: 'date-time' }),
    capacity: Type.Integer({ minimum: 1 }),
    seats_remaining: Type.Integer({ minimum: 0 }),
    price_cents: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "slot-level price override; null when the experience's base_price_cents applies",
    }),
  },
  { $id: 'Slot' },
);

export const WidgetExperienceResponse = Type.Object(
  { experience: Type.Ref('Experience'), slots: Type.Array(Type.Ref('Slot')) },
  { $id: 'WidgetExperienceResponse' },
);

export interface WidgetExperienceResponse {
  experience: Static<typeof Experience>;
  slots: Static<typeof Slot>[];
}
