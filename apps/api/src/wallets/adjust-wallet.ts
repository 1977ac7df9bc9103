import type { Db } from '@booking/db';
import type { Operator } from '../operators/api-key-auth';
import { lockTenantWallet } from './issue-wallet-token';
import { creditWallet, debitWallet } from './wallet-ledger';
import type { AdjustmentRequest, WalletView } from './wallet-schemas';
import { loadWalletView } from './wallet-view';

/**
 * An admin's goodwill credit or correction, with its reason in the ledger. A credit is a lot that
 * never expires; a debit takes available value only (409 insufficient_wallet_balance). The
 * catalogue has no event for it: the ledger entry, with actor and reason, is its record.
 */
export async function adjustWallet(
  db: Db,
  operator: Operator,
  walletId: string,
  request: AdjustmentRequest,
): Promise<WalletView> {
  return db.$transaction(async (tx) => {
    const wallet = await lockTenantWallet(tx, operator, walletId);
    const refs = { actorKeyId: operator.keyId, reason: request.reason };
    if (request.amount_cents > 0) {
      await creditWallet(tx, wallet, {
        kind: 'adjustment',
        source: 'adjustment',
        amountCents: request.amount_cents,
        expiresAt: null,
        ...refs,
      });
    } else {
      await debitWallet(tx, wallet, {
        kind: 'adjustment',
        amountCents: -request.amount_cents,
        fromHold: false,
        ...refs,
      });
    }
    return loadWalletView(tx, operator.tenantId, wallet.id);
  });
}
