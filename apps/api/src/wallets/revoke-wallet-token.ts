import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import type { Operator } from '../operators/api-key-auth';
import { lockTenantWallet } from './issue-wallet-token';
import type { TokenChangeRequest, WalletTokenView } from './wallet-schemas';
import { recordAccessChange } from './wallet-events';
import { tokenView } from './wallet-view';

/** The wallet's active token, under the wallet's lock; a revoked one cannot change again. */
export async function activeToken(tx: Tx, walletId: string, tokenId: string) {
  const token = await tx.walletToken.findFirst({ where: { id: tokenId, walletId } });
  if (!token) throw new AppError('wallet_token_not_found');
  if (token.status === 'revoked') throw new AppError('wallet_token_revoked', { token_id: token.id });
  return token;
}

/**
 * A manager revokes a token (a lost card): from the commit on it spends nothing, and tenders it
 * already holds stay as they are. wallet.access_changed (revoked).
 */
export async function revokeWalletToken(
  db: Db,
  operator: Operator,
  walletId: string,
  tokenId: string,
  request: TokenChangeRequest,
): Promise<WalletTokenView> {
  return db.$transaction(async (tx) => {
    const wallet = await lockTenantWallet(tx, operator, walletId);
    const token = await activeToken(tx, wallet.id, tokenId);
    const revoked = await tx.walletToken.update({
      where: { id: token.id },
      data: {
        status: 'revoked',
        revokedAt: new Date(),
        revokedByKeyId: operator.keyId,
        revokeReason: request.reason ?? null,
      },
    });
    await recordAccessChange(tx, operator, wallet.id, {
      action: 'revoked',
      token,
      previousTokenId: null,
      reason: request.reason ?? null,
    });
    return tokenView(revoked);
  });
}
