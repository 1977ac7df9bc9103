import { Type } from '@sinclair/typebox';
import { Cents, Currency, Id, Nullable } from './common';

const refundStatus = Type.Literal('succeeded');
const reason = Nullable(Type.String(), 'the reason given, or null');

export const MoneyEvents = {
  'refund.created': Type.Object({
    refund_id: Id(),
    payment_intent_id: Type.String({ description: 'the Stripe PaymentIntent refunded' }),
    amount_cents: Cents(),
    reason,
    status: refundStatus,
  }),
  'refund.partial_no_cancel': Type.Object({
    refund_id: Id(),
    payment_intent_id: Type.String(),
    booking_id: Id(),
    amount_cents: Cents(),
    refund_total_cents: Cents('all succeeded refunds of the payments that paid for the booking'),
    reason,
    status: refundStatus,
  }),
  'gift_card.sold': Type.Object({
    gift_card_id: Id(),
    amount_cents: Cents(),
    currency: Currency,
    payment_id: Id('the sale id'),
    actor_user_id: Id(),
  }),
  'gift_card.redeemed': Type.Object({
    gift_card_id: Id(),
    booking_id: Type.Optional(Id('when it paid a booking (entity_type booking)')),
    order_id: Type.Optional(Id('when it paid a retail order (entity_type order)')),
    amount_cents: Cents(),
    currency: Currency,
  }),
  'shift.opened': Type.Object({
    shift_id: Id(),
    opened_at: Type.String({ format: 'date-time' }),
    opened_by_user_id: Id(),
    starting_cash_cents: Cents(),
    venue_id: Nullable(Id(), 'null: the venue-less register'),
  }),
  'shift.closed': Type.Object({
    shift_id: Id(),
    opened_at: Type.String({ format: 'date-time' }),
    closed_at: Type.String({ format: 'date-time' }),
    closed_by_user_id: Id(),
    starting_cash_cents: Cents(),
    collected_cash_cents: Cents(),
    expected_cash_cents: Cents(),
    ending_cash_cents: Cents(),
    variance_cents: Cents('ending − expected'),
  }),
};
