import { Type, type Static } from '@sinclair/typebox';

const Cents = (maximum: number, description: string) => Type.Integer({ minimum: 0, maximum, description });
const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });

export const OpenShiftRequest = Type.Object(
  {
    starting_cash_cents: Cents(10_000_000, 'cash counted into the register when it opens'),
    venue_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: "one of the tenant's venues; without it the shift is the tenant's venue-less register",
      }),
    ),
  },
  { additionalProperties: false, $id: 'OpenShiftRequest' },
);
export type OpenShiftRequest = Static<typeof OpenShiftRequest>;

export const CloseShiftRequest = Type.Object(
  {
    shift_id: Uuid,
    counted_cash_cents: Cents(100_000_000, 'cash counted in the register at close (the ending cash)'),
  },
  { additionalProperties: false, $id: 'CloseShiftRequest' },
);
export type CloseShiftRequest = Static<typeof CloseShiftRequest>;

export const CashPaymentRequest = Type.Object(
  {
    booking_id: Uuid,
    amount_cents: Type.Integer({
      minimum: 1,
      maximum: 100_000_000,
      description: 'must equal what is due: the booking total less any gift card applied',
    }),
  },
  { additionalProperties: false, $id: 'CashPaymentRequest' },
);
export type CashPaymentRequest = Static<typeof CashPaymentRequest>;

export const OpenShift = Type.Object(
  {
    shift_id: Uuid,
    status: Type.Literal('open'),
    venue_id: Type.Union([Uuid, Type.Null()]),
    opened_at: Timestamp,
    opened_by_user_id: Type.String({ description: 'the API key that opened it' }),
    starting_cash_cents: Type.Integer({ minimum: 0 }),
  },
  { $id: 'OpenShift' },
);
export type OpenShift = Static<typeof OpenShift>;

export const ClosedShift = Type.Object(
  {
    shift_id: Uuid,
    status: Type.Literal('closed'),
    venue_id: Type.Union([Uuid, Type.Null()]),
    opened_at: Timestamp,
    closed_at: Timestamp,
    opened_by_user_id: Type.String(),
    closed_by_user_id: Type.String({ description: 'the API key that closed it' }),
    starting_cash_cents: Type.Integer({ minimum: 0 }),
    collected_cash_cents: Type.Integer({
      description:
        'cash booking payments, cash gift card sales and cash tenders of settled till orders taken in the shift, less cash refunds paid out of it (negative when refunds paid out more than was taken)',
    }),
    expected_cash_cents: Type.Integer({ description: 'starting + collected' }),
    ending_cash_cents: Type.Integer({ minimum: 0, description: 'the counted cash' }),
    variance_cents: Type.Integer({ description: 'ending - expected: positive = over, negative = short' }),
  },
  { $id: 'ClosedShift' },
);
export type ClosedShift = Static<typeof ClosedShift>;

export const CashPaymentResponse = Type.Object(
  {
    booking_id: Uuid,
    status: Type.Literal('confirmed'),
    payment_id: Uuid,
    shift_id: Uuid,
    amount_cents: Type.Integer({ minimum: 1 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
  },
  { $id: 'CashPaymentResponse' },
);
export type CashPaymentResponse = Static<typeof CashPaymentResponse>;
