import { Type, type Static } from '@sinclair/typebox';

export const SellGiftCardRequest = Type.Object(
  {
    amount_cents: Type.Integer({
      minimum: 100,
      maximum: 1_000_000,
      description: 'value of the card, 1.00 to 10,000.00',
    }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, uppercase' }),
    payment_method: Type.Union([Type.Literal('card'), Type.Literal('cash')], {
      description: 'how the buyer paid at the till',
    }),
    payment_reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7e]+$',
        description:
          "card only, and required then: the id of a succeeded Stripe PaymentIntent (pi_...) made for this sale, with metadata tenant_id (this tenant's id) and purpose=gift_card_sale, of the same amount and currency and not refunded; never a booking's. Backs one sale, across all tenants",
      }),
    ),
    shift_id: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'the open POS shift of the till; required for cash, optional for card',
      }),
    ),
    recipient_email: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description: 'who the card is for; accepted for the receipt, never stored in events',
      }),
    ),
  },
  {
    additionalProperties: false,
    $id: 'SellGiftCardRequest',
    allOf: [
      {
        if: { properties: { payment_method: { const: 'card' } } },
        then: { properties: { payment_reference: true }, required: ['payment_reference'] },
      },
      {
        if: { properties: { payment_method: { const: 'cash' } } },
        then: { properties: { shift_id: true }, required: ['shift_id'] },
      },
    ],
  },
);
export type SellGiftCardRequest = Static<typeof SellGiftCardRequest>;

export const SellGiftCardResponse = Type.Object(
  {
    gift_card_id: Type.String({ format: 'uuid' }),
    code: Type.String({ description: 'the redemption code, shown this once; only its hash is stored' }),
    balance_cents: Type.Integer({ minimum: 0 }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
    last4: Type.String({ minLength: 4, maxLength: 4, description: 'last four characters of the code, for lookups' }),
    sale_id: Type.String({ format: 'uuid', description: 'the sale record; payment_id of gift_card.sold' }),
  },
  { $id: 'SellGiftCardResponse' },
);
export type SellGiftCardResponse = Static<typeof SellGiftCardResponse>;

export const ReissueGiftCardResponse = Type.Object(
  {
    booking_id: Type.String({ format: 'uuid' }),
    status: Type.Literal('cancelled'),
    gift_card: Type.Object({
      id: Type.String({ format: 'uuid' }),
      code: Type.String({ description: "the new card's redemption code, shown this once" }),
      balance_cents: Type.Integer({ minimum: 1, description: 'the amount paid for the booking, net of refunds' }),
      currency: Type.String({ minLength: 3, maxLength: 3 }),
    }),
  },
  { $id: 'ReissueGiftCardResponse' },
);
export type ReissueGiftCardResponse = Static<typeof ReissueGiftCardResponse>;
