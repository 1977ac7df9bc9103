import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });

const ProductLine = Type.Object(
  {
    type: Type.Literal('product'),
    sku: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    description: Type.String({ minLength: 1, maxLength: 200 }),
    quantity: Type.Integer({ minimum: 1, maximum: 1000 }),
    unit_price_cents: Type.Integer({ minimum: 0, maximum: 10_000_000 }),
  },
  { additionalProperties: false },
);

const WalletLoadLine = Type.Object(
  {
    type: Type.Literal('wallet_load'),
    wallet_id: Type.String({ format: 'uuid', description: 'the wallet funded when the order settles' }),
    amount_cents: Type.Integer({ minimum: 1, maximum: 10_000_000 }),
  },
  { additionalProperties: false },
);

const MembershipLine = Type.Object(
  {
    type: Type.Literal('membership'),
    plan_id: Type.String({
      format: 'uuid',
      description: 'an active fixed-term plan in the order currency (recurring plans are sold online)',
    }),
    customer_id: Type.String({ format: 'uuid', description: 'the owner, who pays for the membership' }),
    holder_customer_id: Type.Optional(
      Type.String({ format: 'uuid', description: 'the holder who uses it; default: the owner' }),
    ),
  },
  { additionalProperties: false },
);

export const OpenPosOrderRequest = Type.Object(
  {
    shift_id: Type.String({ format: 'uuid', description: 'the open shift of the till taking the order' }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper-case' }),
    customer_id: Type.Optional(Uuid),
    lines: Type.Array(Type.Union([ProductLine, WalletLoadLine, MembershipLine]), { minItems: 1, maxItems: 50 }),
    membership_token: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description:
          "a member's token: the plan's member discount comes off the product lines (discount_cents) when the plan discounts retail",
      }),
    ),
  },
  { additionalProperties: false, $id: 'OpenPosOrderRequest' },
);
export type OpenPosOrderRequest = Static<typeof OpenPosOrderRequest>;

export const AddTenderRequest = Type.Object(
  {
    type: Type.Union([Type.Literal('card'), Type.Literal('cash'), Type.Literal('wallet'), Type.Literal('gift_card')]),
    amount_cents: Type.Integer({ minimum: 1, maximum: 100_000_000 }),
    wallet_token: Type.Optional(
      Type.String({ minLength: 4, maxLength: 100, description: 'wallet: the card number or QR secret presented' }),
    ),
    gift_card_code: Type.Optional(Type.String({ minLength: 4, maxLength: 32, description: 'gift_card: its code' })),
    payment_reference: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'card: the succeeded Stripe PaymentIntent (metadata tenant_id, purpose=pos_order, order_id) for exactly amount_cents',
      }),
    ),
  },
  { additionalProperties: false, $id: 'AddTenderRequest' },
);
export type AddTenderRequest = Static<typeof AddTenderRequest>;

export const SettlePosOrderRequest = Type.Object(
  {
    unpaid: Type.Optional(
      Type.Boolean({
        description:
          'manager+: confirm the order although its tenders do not cover the total (recorded as confirmed_unpaid)',
      }),
    ),
  },
  { additionalProperties: false, $id: 'SettlePosOrderRequest' },
);
export type SettlePosOrderRequest = Static<typeof SettlePosOrderRequest>;
