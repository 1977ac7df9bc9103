import { Type, type Static } from '@sinclair/typebox';

const bookingId = Type.String({ format: 'uuid', description: 'the booking whose card payment is refunded' });
const amountCents = Type.Integer({
  minimum: 1,
  description: 'cents to refund; default: everything still refundable on the card payment',
});
const reason = Type.String({ minLength: 1, maxLength: 500, description: 'why, for the audit trail and the events' });

export const RefundRequest = Type.Object(
  { booking_id: bookingId, amount_cents: Type.Optional(amountCents), reason: Type.Optional(reason) },
  { additionalProperties: false, $id: 'RefundRequest' },
);
export type RefundRequest = Static<typeof RefundRequest>;

export const PartialRefundRequest = Type.Object(
  {
    booking_id: bookingId,
    amount_cents: Type.Optional(amountCents),
    reason: Type.Optional(reason),
    keep_booking_active: Type.Boolean({
      description: 'true: the booking stays confirmed and keeps its seats whatever is refunded',
    }),
  },
  { additionalProperties: false, $id: 'PartialRefundRequest' },
);
export type PartialRefundRequest = Static<typeof PartialRefundRequest>;

export const RefundResponse = Type.Object(
  {
    refund_id: Type.String({ format: 'uuid' }),
    booking_id: Type.String({ format: 'uuid' }),
    payment_intent_id: Type.String({ description: "the provider's PaymentIntent that is refunded" }),
    provider_refund_id: Type.Union([Type.String(), Type.Null()], { description: "the provider's refund id" }),
    amount_cents: Type.Integer({ minimum: 1 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    reason: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      description: 'pending: the provider accepted it but has not settled it yet (a notification will)',
    }),
    keep_booking_active: Type.Boolean(),
    booking_status: Type.String({ description: 'the booking after the refund: refunded once nothing paid is left' }),
    refunded_total_cents: Type.Integer({ minimum: 0, description: "sum of the booking's succeeded refunds" }),
    refundable_cents: Type.Integer({
      minimum: 0,
      description: 'what is still refundable on the card payment (pending refunds are already deducted)',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false, $id: 'RefundResponse' },
);
export type RefundResponse = Static<typeof RefundResponse>;
