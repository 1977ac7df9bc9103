import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import type { LockedWallet } from '../locks';
import type { Operator } from '../operators/api-key-auth';

/** wallet.funded: paid value added to the wallet as a new lot (its balance as it is now). */
export function recordFunded(
  tx: Tx,
  wallet: LockedWallet,
  funding: { orderId: string; lotId: string; amountCents: number; expiresAt: Date | null; channel: 'online' | 'pos' },
): Promise<string> {
  return recordEvent(tx, {
    tenantId: wallet.tenantId,
    name: 'wallet.funded',
    entityType: 'wallet',
    entityId: wallet.id,
    fields: {
      wallet_id: wallet.id,
      customer_id: wallet.customerId,
      order_id: funding.orderId,
      lot_id: funding.lotId,
      amount_cents: funding.amountCents,
      currency: wallet.currency,
      balance_cents: wallet.balanceCents,
      expires_at: funding.expiresAt?.toISOString() ?? null,
      channel: funding.channel,
    },
  });
}

/** wallet.access_changed: a token issued, replaced or revoked, named but never its secret. */
export function recordAccessChange(
  tx: Tx,
  operator: Operator,
  walletId: string,
  change: {
    action: 'issued' | 'replaced' | 'revoked';
    token: { id: string; kind: 'card' | 'qr'; last4: string };
    previousTokenId: string | null;
    reason: string | null;
  },
): Promise<string> {
  return recordEvent(tx, {
    tenantId: operator.tenantId,
    name: 'wallet.access_changed',
    entityType: 'wallet',
    entityId: walletId,
    fields: {
      wallet_id: walletId,
      action: change.action,
      token_id: change.token.id,
      token_kind: change.token.kind,
      token_last4: change.token.last4,
      previous_token_id: change.previousTokenId,
      reason: change.reason,
      actor_user_id: operator.keyId,
    },
  });
}
