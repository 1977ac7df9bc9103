import { Type } from '@sinclair/typebox';
import { BookingSubject, Cents, Currency, Id, Nullable, Timestamp } from './common';

const reason = Nullable(Type.String(), 'free text the actor gave, or null');

export const BookingEvents = {
  'booking.created': Type.Object({ ...BookingSubject, guest_count: Type.Integer() }),
  'booking.confirmed': Type.Object({
    ...BookingSubject,
    order_id: Id('the booking id: every booking is its own order'),
    is_primary_booking: Type.Literal(true),
    charge_amount_cents: Cents('the booking total'),
    currency: Currency,
    method: Type.Union(
      [
        Type.Literal('card'),
        Type.Literal('gift_card'),
        Type.Literal('cash'),
        Type.Literal('membership'),
        Type.Literal('free'),
      ],
      {
        description:
          'what completed the payment; membership: the member discount left nothing to pay; free: the total was zero',
      },
    ),
    net_paid_cents: Cents('what was paid, gift card part included'),
  }),
  'booking.cancelled': Type.Object({
    ...BookingSubject,
    cancelled_by_user_id: Nullable(
      Id(),
      'null when the service cancelled it: the unpaid-booking expiry, or a late card payment that could not be given back',
    ),
    reason: Type.Optional(
      Type.Union([Type.Literal('unpaid_hold_expired'), Type.Literal('automatic_refund_failed')], {
        description:
          'only when the service cancelled it; automatic_refund_failed: its late card payment could not be given back, an operator refunds it',
      }),
    ),
  }),
  'booking.reissued': Type.Object({
    ...BookingSubject,
    new_gift_card_id: Id(),
    amount_cents: Cents('paid, net of refunds'),
    actor_user_id: Id(),
  }),
  'booking.rescheduled': Type.Object({
    ...BookingSubject,
    new_slot_id: Id('also slot_id'),
    new_slot_starts_at: Timestamp(),
    new_slot_ends_at: Timestamp(),
    rescheduled_by_user_id: Nullable(Id(), 'null: the customer, through a manage link'),
    reason,
  }),
  'booking.transferred': Type.Object({
    ...BookingSubject,
    to_email: Type.String({ description: 'the new customer, also in customer_email' }),
    transferred_by_user: Id(),
    reason,
  }),
  'booking.party_updated': Type.Object({
    ...BookingSubject,
    guest_delta: Type.Integer(),
    previous_guest_count: Type.Integer(),
    guest_count: Type.Integer(),
    amount_delta_cents: Cents('guest_delta × the unit price the booking was made at'),
    total_cents: Cents(),
    currency: Currency,
    actor_user_id: Id(),
    reason,
  }),
  'booking.refunded': Type.Object({
    ...BookingSubject,
    amount_cents: Cents(
      'all succeeded refunds of the payments that paid for the booking; the payment, for an automatic refund',
    ),
  }),
  'booking.checked_in': Type.Object({
    booking_id: Id(),
    checked_in_at: Timestamp(),
    checked_in_by_user_id: Id(),
  }),
};

/** Fields kept sealed in the outbox (bearer secrets) and opened only to send. */
export const BookingSecretFields = {
  'booking.reissued': Type.Object({
    new_gift_card_code: Type.String({ description: 'the new card’s code: a bearer secret, sent once' }),
  }),
};
