import { BOOKING_STATUSES } from '@booking/domain';
import { Type, type Static, type TSchema } from '@sinclair/typebox';

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
    membership_token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          "the member token of a membership of this tenant: the booking takes one visit (the member's own admission) from its allowance, and the plan's member discount when it covers bookings",
      }),
    ),
    guest_passes: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 199,
        description:
          "guests admitted on the membership's guest passes, at most guest_count - 1 (the member is one of the guests); needs membership_token",
      }),
    ),
  },
  { additionalProperties: false, $id: 'BookingRequest' },
);
export type BookingRequest = Static<typeof BookingRequest>;

export const BookingResponse = Type.Object(
  {
    booking_id: Type.String({ format: 'uuid' }),
    booking_token: Type.String({ description: 'HMAC-signed, 1-hour TTL; send back as X-Booking-Token' }),
    waiver_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description:
        "set when the experience requires a waiver; guests read and sign there until a day after the visit ends, wherever it has been moved, while the booking is this customer's",
    }),
    manage_token: Type.String({
      description:
        "signed token for customer self-service (reschedule) as header X-Manage-Token; works until the visit starts, wherever it has been moved, while the booking is this customer's",
    }),
    status: Type.Union([Type.Literal('held'), Type.Literal('confirmed')]),
    total_cents: Type.Integer({ minimum: 0 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    gift_card_applied_cents: Type.Integer({ minimum: 0 }),
    member_discount_cents: Type.Integer({
      minimum: 0,
      description: 'taken off by the member discount of the membership presented; total_cents is after it',
    }),
    payment_complete: Type.Boolean({
      description: 'true only when a gift card covered the full total; the payment provider is then bypassed',
    }),
  },
  { $id: 'BookingResponse' },
);
export type BookingResponse = Static<typeof BookingResponse>;

export const CheckInByTokenRequest = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 2048, description: 'signed check-in token from the booking QR' }) },
  { additionalProperties: false, $id: 'CheckInByTokenRequest' },
);
export type CheckInByTokenRequest = Static<typeof CheckInByTokenRequest>;

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const StatusOfBooking = Type.Union(
  BOOKING_STATUSES.map((status) => Type.Literal(status)),
  { description: 'held (waiting for payment), confirmed, cancelled or refunded' },
);

/** A booking as operators see it: GET /api/bookings/{id} and GET /api/v1/bookings/{id}. */
export const OperatorBooking = Type.Object(
  {
    booking_id: Uuid,
    status: StatusOfBooking,
    experience: Type.Object({ id: Uuid, name: Type.String(), slug: Type.String() }),
    slot: Type.Object({ id: Uuid, starts_at: Timestamp, ends_at: Timestamp }),
    venue_id: Uuid,
    guest_count: Type.Integer({ minimum: 1 }),
    customer: Type.Object({
      id: Uuid,
      email: Type.String({ description: 'a placeholder at the reserved `invalid` domain once anonymised' }),
      first_name: Type.String(),
      last_name: nullable(Type.String()),
      phone: nullable(Type.String()),
    }),
    notes: nullable(Type.String()),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    unit_price_cents: Type.Integer({ minimum: 0 }),
    addons: Type.Array(
      Type.Object({
        addon_id: Uuid,
        qty: Type.Integer({ minimum: 1 }),
        unit_price_cents: Type.Integer({ minimum: 0 }),
      }),
    ),
    total_cents: Type.Integer({ minimum: 0 }),
    gift_card_applied_cents: Type.Integer({ minimum: 0 }),
    paid_cents: Type.Integer({
      minimum: 0,
      description:
        'sum of the succeeded payments that paid for it: a mismatched one (listed in payments) never did, and may be in another currency',
    }),
    payments: Type.Array(
      Type.Object({
        id: Uuid,
        method: Type.Union([Type.Literal('card'), Type.Literal('gift_card'), Type.Literal('cash')]),
        amount_cents: Type.Integer({ minimum: 0 }),
        currency: Type.String({ description: "ISO 4217, as paid: a mismatched payment's may not be the booking's" }),
        status: Type.Union([Type.Literal('succeeded'), Type.Literal('refunded')]),
        mismatched: Type.Boolean({
          description:
            'a card payment that did not cover what the held booking owed (less, or another currency): refunded automatically, it never paid for the booking',
        }),
        provider_reference: nullable(Type.String({ description: "the provider's PaymentIntent id, for cards" })),
        created_at: Timestamp,
      }),
      { description: 'oldest first' },
    ),
    hold_expires_at: Timestamp,
    review_reason: nullable(
      Type.String({
        description:
          'why an operator should look at it: a card payment that could not confirm it and is refunded instead (seats_unavailable_at_payment, paid_while_confirmed, paid_while_cancelled, paid_while_refunded), payment_amount_mismatch (a card payment that did not cover what the held booking owes, less or in another currency, is refunded: the booking stays held and payable), payment_refund_pending (that refund is not done yet: the booking stays held without seats), automatic_refund_failed (that refund failed: the money is refundable again), refunded_after_reissue (card money came back through Stripe after the paid amount was reissued as a gift card)',
      }),
    ),
    checked_in_at: nullable(Timestamp),
    check_in_token: Type.String({ description: 'the token of the QR code, for POST /api/bookings/check-in-by-token' }),
    created_at: Timestamp,
  },
  { $id: 'OperatorBooking' },
);
export type OperatorBooking = Static<typeof OperatorBooking>;

export const CancelBookingResponse = Type.Object(
  { booking_id: Uuid, status: Type.Literal('cancelled') },
  { $id: 'CancelBookingResponse' },
);
export type CancelBookingResponse = Static<typeof CancelBookingResponse>;

export const CheckInResponse = Type.Object(
  {
    booking_id: Uuid,
    checked_in_at: Timestamp,
    already_checked_in: Type.Boolean({ description: 'true when the booking was checked in before; nothing changed' }),
  },
  { $id: 'CheckInResponse' },
);
export type CheckInResponse = Static<typeof CheckInResponse>;
