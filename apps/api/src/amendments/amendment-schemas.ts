import { Type, type Static } from '@sinclair/typebox';

const Reason = (description: string) => Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', description });

export const RescheduleRequest = Type.Object(
  {
    slot_id: Type.String({
      format: 'uuid',
      description: "a future slot of the same experience with room for the booking's guests",
    }),
    reason: Type.Optional(Reason('why the booking moves; recorded on the amendment and the event')),
  },
  { additionalProperties: false, $id: 'RescheduleRequest' },
);
export type RescheduleRequest = Static<typeof RescheduleRequest>;

const SlotTimes = Type.Object({
  id: Type.String({ format: 'uuid' }),
  starts_at: Type.String({ format: 'date-time' }),
  ends_at: Type.String({ format: 'date-time' }),
});

export const RescheduleResponse = Type.Object(
  { booking_id: Type.String({ format: 'uuid' }), slot: SlotTimes },
  { $id: 'RescheduleResponse' },
);
export type RescheduleResponse = Static<typeof RescheduleResponse>;

export const TransferRequest = Type.Object(
  {
    customer: Type.Object(
      {
        email: Type.String({
          format: 'email',
          maxLength: 254,
          description: 'the new customer; later messages go here',
        }),
        first_name: Type.String({ minLength: 1, maxLength: 100 }),
        last_name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        phone: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
      },
      { additionalProperties: false },
    ),
    reason: Reason('why the booking changes hands'),
  },
  { additionalProperties: false, $id: 'TransferRequest' },
);
export type TransferRequest = Static<typeof TransferRequest>;

export const TransferResponse = Type.Object(
  {
    booking_id: Type.String({ format: 'uuid' }),
    customer: Type.Object({
      id: Type.String({ format: 'uuid' }),
      email: Type.String({ format: 'email' }),
      first_name: Type.String(),
      last_name: Type.Union([Type.String(), Type.Null()]),
      phone: Type.Union([Type.String(), Type.Null()]),
    }),
    manage_token: Type.String({
      description: "the new customer's self-service token (X-Manage-Token); the previous customer's no longer works",
    }),
    waiver_url: Type.Union([Type.String({ format: 'uri' }), Type.Null()], {
      description:
        "the new customer's waiver link, set when the experience requires a waiver; the previous customer's no longer works",
    }),
  },
  { $id: 'TransferResponse' },
);
export type TransferResponse = Static<typeof TransferResponse>;

export const PartyAmendmentRequest = Type.Object(
  {
    guest_count: Type.Integer({
      minimum: 1,
      maximum: 200,
      description: "the booking's new guest count, within the experience's party size",
    }),
    reason: Type.Optional(Reason('why the party changes')),
  },
  { additionalProperties: false, $id: 'PartyAmendmentRequest' },
);
export type PartyAmendmentRequest = Static<typeof PartyAmendmentRequest>;

export const PartyAmendmentResponse = Type.Object(
  {
    booking_id: Type.String({ format: 'uuid' }),
    guest_count: Type.Integer({ minimum: 1 }),
    total_cents: Type.Integer({ minimum: 0 }),
    amount_delta_cents: Type.Integer({
      description: "guest delta × the booking's unit price: positive is owed by the customer, negative is owed back",
    }),
  },
  { $id: 'PartyAmendmentResponse' },
);
export type PartyAmendmentResponse = Static<typeof PartyAmendmentResponse>;
