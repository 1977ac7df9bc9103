import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { generateWalletToken, hashWalletToken, walletTokenLast4, type WalletTokenKind } from '@booking/signing';
import { lockWallet, type LockedWallet } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { IssuedWalletToken, IssueTokenRequest } from './wallet-schemas';
import { recordAccessChange } from './wallet-events';
import { tokenView } from './wallet-view';

/**
 * Writes a new token of a locked wallet and returns it with its secret, which exists only in this
 * answer: the row keeps its SHA-256 and last four characters.
 */
export async function writeToken(
  tx: Tx,
  wallet: LockedWallet,
  kind: WalletTokenKind,
  operator: Operator,
): Promise<IssuedWalletToken> {
  const secret = generateWalletToken(kind);
  const token = await tx.walletToken.create({
    data: {
      id: randomUUID(),
      tenantId: wallet.tenantId,
      walletId: wallet.id,
      kind,
      tokenHash: hashWalletToken(secret),
      last4: walletTokenLast4(secret),
      issuedByKeyId: operator.keyId,
    },
  });
  return { ...tokenView(token), secret };
}

/** Locks the tenant's wallet before its tokens change, so two changes of one token queue. */
export async function lockTenantWallet(tx: Tx, operator: Operator, walletId: string): Promise<LockedWallet> {
  const wallet = await lockWallet(tx, { tenantId: operator.tenantId }, walletId);
  if (!wallet) throw new AppError('wallet_not_found');
  return wallet;
}

/** Staff issue a card or QR token for a wallet: wallet.access_changed (issued), never the secret. */
export async function issueWalletToken(
  db: Db,
  operator: Operator,
  walletId: string,
  request: IssueTokenRequest,
): Promise<IssuedWalletToken> {
  return db.$transaction(async (tx) => {
    const wallet = await lockTenantWallet(tx, operator, walletId);
    const issued = await writeToken(tx, wallet, request.kind, operator);
    await recordAccessChange(tx, operator, wallet.id, {
      action: 'issued',
      token: { id: issued.token_id, kind: issued.kind, last4: issued.last4 },
      previousTokenId: null,
      reason: null,
    });
    return issued;
  });
}
