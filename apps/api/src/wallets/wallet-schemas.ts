import { Type, type Static } from '@sinclair/typebox';

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const NullableUuid = Type.Union([Uuid, Type.Null()]);
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, upper-case' });
const Reason = Type.String({ minLength: 1, maxLength: 500 });
const TokenKind = Type.Union([Type.Literal('card'), Type.Literal('qr')], {
  description: 'card: a number typed or swiped at the till (W + 20 characters); qr: a QR code secret',
});

export const CreateWalletRequest = Type.Object(
  { customer_id: Uuid, currency: Currency },
  { additionalProperties: false, $id: 'CreateWalletRequest' },
);
export type CreateWalletRequest = Static<typeof CreateWalletRequest>;

export const WalletsQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: '1 to 100, default 20' })),
    starting_after: Type.Optional(Uuid),
    customer_id: Type.Optional(Uuid),
    currency: Type.Optional(Currency),
  },
  { additionalProperties: false },
);
export type WalletsQuery = Static<typeof WalletsQuery>;

export const EntriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: '1 to 100, default 20' })),
    starting_after: Type.Optional(Uuid),
  },
  { additionalProperties: false },
);
export type EntriesQuery = Static<typeof EntriesQuery>;

export const IssueTokenRequest = Type.Object(
  { kind: TokenKind },
  { additionalProperties: false, $id: 'IssueWalletTokenRequest' },
);
export type IssueTokenRequest = Static<typeof IssueTokenRequest>;

export const TokenChangeRequest = Type.Object(
  { reason: Type.Optional(Reason) },
  { additionalProperties: false, $id: 'WalletTokenChangeRequest' },
);
export type TokenChangeRequest = Static<typeof TokenChangeRequest>;

export const AdjustmentRequest = Type.Object(
  {
    amount_cents: Type.Integer({
      minimum: -100_000_000,
      maximum: 100_000_000,
      not: { const: 0 },
      description: 'positive: a credit (a new lot that never expires); negative: a debit of available value',
    }),
    reason: Reason,
  },
  { additionalProperties: false, $id: 'WalletAdjustmentRequest' },
);
export type AdjustmentRequest = Static<typeof AdjustmentRequest>;

export const WalletTokenView = Type.Object(
  {
    token_id: Uuid,
    wallet_id: Uuid,
    kind: TokenKind,
    last4: Type.String({ description: 'the last four characters of the secret' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
    replaced_by_id: Type.Union([Uuid, Type.Null()], { description: 'the token that replaced it' }),
    created_at: Timestamp,
    revoked_at: NullableTimestamp,
  },
  { $id: 'WalletToken' },
);
export type WalletTokenView = Static<typeof WalletTokenView>;

export const IssuedWalletToken = Type.Object(
  {
    ...WalletTokenView.properties,
    secret: Type.String({
      description: 'the card number or QR secret: shown this once, stored only as its SHA-256; print or encode it now',
    }),
  },
  { $id: 'IssuedWalletToken' },
);
export type IssuedWalletToken = Static<typeof IssuedWalletToken>;

export const WalletLotView = Type.Object(
  {
    lot_id: Uuid,
    source: Type.Union([
      Type.Literal('online_topup'),
      Type.Literal('pos_load'),
      Type.Literal('refund_credit'),
      Type.Literal('adjustment'),
    ]),
    order_id: NullableUuid,
    amount_cents: Type.Integer({ minimum: 1 }),
    remaining_cents: Type.Integer({ minimum: 0 }),
    expires_at: Type.Union([Timestamp, Type.Null()], { description: 'null: never' }),
    created_at: Timestamp,
  },
  { $id: 'WalletLot' },
);

const walletFields = {
  wallet_id: Uuid,
  customer_id: Uuid,
  currency: Type.String({ minLength: 3, maxLength: 3 }),
  balance_cents: Type.Integer({ minimum: 0, description: 'the sum of the ledger, and of the lots remaining' }),
  held_cents: Type.Integer({ minimum: 0, description: 'set aside by open till orders and refunds in flight' }),
  available_cents: Type.Integer({ minimum: 0, description: 'balance - held: what can be spent now' }),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const WalletSummary = Type.Object(walletFields, { $id: 'WalletSummary' });
export type WalletSummary = Static<typeof WalletSummary>;

export const WalletView = Type.Object(
  {
    ...walletFields,
    lots: Type.Array(Type.Ref('WalletLot'), {
      maxItems: 100,
      description: 'the 100 newest lots with value left, then spent ones',
    }),
    tokens: Type.Array(Type.Ref('WalletToken'), { description: 'every token, newest first; never their secrets' }),
  },
  { $id: 'Wallet' },
);
export type WalletView = Static<typeof WalletView>;

export const WalletList = Type.Object(
  {
    data: Type.Array(Type.Ref('WalletSummary')),
    next_starting_after: Type.Union([Uuid, Type.Null()], { description: 'null on the last page' }),
  },
  { $id: 'WalletList' },
);

export const WalletEntryView = Type.Object(
  {
    entry_id: Uuid,
    kind: Type.Union(
      ['fund', 'hold', 'release', 'capture', 'refund_credit', 'funding_return', 'expire', 'adjustment'].map((k) =>
        Type.Literal(k),
      ),
    ),
    balance_delta: Type.Integer(),
    held_delta: Type.Integer(),
    balance_after: Type.Integer({ minimum: 0 }),
    held_after: Type.Integer({ minimum: 0 }),
    lot_id: NullableUuid,
    order_id: NullableUuid,
    tender_id: NullableUuid,
    refund_id: NullableUuid,
    actor_user_id: Type.Union([Uuid, Type.Null()], {
      description: 'the API key that acted; null for jobs and the provider',
    }),
    reason: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { $id: 'WalletEntry' },
);

export const WalletEntryList = Type.Object(
  {
    data: Type.Array(Type.Ref('WalletEntry'), { description: 'newest first' }),
    next_starting_after: Type.Union([Uuid, Type.Null()], { description: 'null on the last page' }),
  },
  { $id: 'WalletEntryList' },
);
