import { Type } from '@sinclair/typebox';
import { Cents, Currency, Id, Nullable, Timestamp } from './common';

const balance = Cents('the wallet balance after the change, held value included');
const Channel = Type.Union([Type.Literal('online'), Type.Literal('pos')]);
const FundingReturnReason = Type.Union([Type.Literal('refund'), Type.Literal('dispute')], {
  description: 'refund: a refund of the funding purchase; dispute: the payer disputed it with their bank',
});

/** Stored value: funding, spending, refunds, expiry and the tokens that spend it. */
export const WalletEvents = {
  'wallet.funded': Type.Object({
    wallet_id: Id(),
    customer_id: Id(),
    order_id: Id('the order that paid for the value'),
    lot_id: Id('the funding lot: its value expires together'),
    amount_cents: Cents(),
    currency: Currency,
    balance_cents: balance,
    expires_at: Nullable(Timestamp(), 'when what is left of this funding expires; null: never'),
    channel: Channel,
  }),
  'wallet.spent': Type.Object({
    wallet_id: Id(),
    order_id: Id(),
    tender_id: Id(),
    amount_cents: Cents(),
    currency: Currency,
    balance_cents: balance,
    shift_id: Id(),
    actor_user_id: Id(),
  }),
  'wallet.refunded': Type.Object({
    wallet_id: Id(),
    order_id: Id(),
    tender_id: Id('the wallet tender refunded'),
    refund_id: Id(),
    amount_cents: Cents('credited back to the wallet'),
    currency: Currency,
    balance_cents: balance,
    reason: Nullable(Type.String(), 'the reason given, or null'),
    actor_user_id: Id(),
  }),
  'wallet.funding_returned': Type.Object({
    wallet_id: Id(),
    order_id: Id('the order that funded the wallet'),
    refund_id: Id(),
    amount_cents: Cents('money returned to the payer'),
    debited_cents: Cents('value taken back from the wallet: as much of amount_cents as was still unspent'),
    shortfall_cents: Cents('value already spent, so not taken back: amount - debited'),
    currency: Currency,
    balance_cents: balance,
    channel: Channel,
    reason: FundingReturnReason,
  }),
  'wallet.refund_review_required': Type.Object({
    wallet_id: Id(),
    order_id: Id(),
    refund_id: Id(),
    amount_cents: Cents('money returned to the payer'),
    debited_cents: Cents(),
    shortfall_cents: Cents('returned to the payer but already spent from the wallet'),
    currency: Currency,
    reason: FundingReturnReason,
  }),
  'wallet.expired': Type.Object({
    wallet_id: Id(),
    customer_id: Id(),
    expired_cents: Cents(),
    currency: Currency,
    balance_cents: balance,
    lot_ids: Type.Array(Id(), { description: 'the funding lots whose remainder expired' }),
  }),
  'wallet.access_changed': Type.Object({
    wallet_id: Id(),
    action: Type.Union([Type.Literal('issued'), Type.Literal('replaced'), Type.Literal('revoked')]),
    token_id: Id('the token issued, or the one revoked'),
    token_kind: Type.Union([Type.Literal('card'), Type.Literal('qr')]),
    token_last4: Type.String({ description: 'the last four characters of the token, for the card in hand' }),
    previous_token_id: Nullable(Id(), 'replaced: the token it replaces'),
    reason: Nullable(Type.String(), 'the reason given, or null'),
    actor_user_id: Id(),
  }),
};
