import { Type, type Static } from '@sinclair/typebox';

const Customer = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    first_name: Type.String({ minLength: 1, maxLength: 100 }),
    last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    phone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  },
  { additionalProperties: false },
);

const AddonItem = Type.Object(
  {
    addon_id: Type.String({ format: 'uuid' }),
    qty: Type.Integer({ minimum: 1, maximum: 50 }),
  },
  { additionalProperties: false },
);

export const BookingRequest = Type.Object(
  {
    hold_id: Type.String({ format: 'uuid' }),
    slot_id: Type.String({ format: 'uuid', description: 'must match the hold and experience' }),
    experience_id: Type.String({ format: 'uuid' }),
    venue_id: Type.String({ format: 'uuid' }),
    customer: Customer,
    guest_count: Type.Integer({
      minimum: 1,
      maximum: 200,
      description: "within the experience's party size and at most the seats held; extra held seats are released",
    }),
    notes: Type.Optional(Type.String({ maxLength: 2000 })),
    gift_card_code: Type.Optional(Type.String({ minLength: 4, maxLength: 32 })),
    addons: Type.Optional(Type.Array(AddonItem, { maxItems: 20 })),
  },
  { additionalProperties: false, $id: 'BookingRequest' },
);
export type BookingRequest = Static<typeof BookingRequest>;

export const BookingResponse = Type.Object(
  {
    booking_id: Type.String({ format: 'uuid' }),
    booking_token: Type.String({ description: 'HMAC-signed, 1-hour TTL; send back as X-Booking-Token' }),
    waiver_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description: 'set when the experience requires a waiver',
    }),
    manage_token: Type.String({
      description:
        'signed token for customer self-service (reschedule) as header X-Manage-Token; valid until the slot starts',
    }),
    status: Type.Union([Type.Literal('held'), Type.Literal('confirmed')]),
    total_cents: Type.Integer({ minimum: 0 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    gift_card_applied_cents: Type.Integer({ minimum: 0 }),
    payment_complete: Type.Boolean({
      description: 'true only when a gift card covered the full total; the payment provider is then bypassed',
    }),
  },
  { $id: 'BookingResponse' },
);
export type BookingResponse = Static<typeof BookingResponse>;
