import type { Db } from '@booking/db';
import type { Operator } from '../operators/api-key-auth';
import { lockTenantWallet, writeToken } from './issue-wallet-token';
import { activeToken } from './revoke-wallet-token';
import { recordAccessChange } from './wallet-events';
import type { IssuedWalletToken, TokenChangeRequest } from './wallet-schemas';

/**
 * Staff replace a worn or lost card with a new token of the same kind: the old one is revoked
 * and points at its successor, in one transaction, and one wallet.access_changed (replaced)
 * names both.
 */
export async function replaceWalletToken(
  db: Db,
  operator: Operator,
  walletId: string,
  tokenId: string,
  request: TokenChangeRequest,
): Promise<IssuedWalletToken> {
  return db.$transaction(async (tx) => {
    const wallet = await lockTenantWallet(tx, operator, walletId);
    const old = await activeToken(tx, wallet.id, tokenId);
    const issued = await writeToken(tx, wallet, old.kind, operator);
    await tx.walletToken.update({
      where: { id: old.id },
      data: {
        status: 'revoked',
        revokedAt: new Date(),
        revokedByKeyId: operator.keyId,
        revokeReason: request.reason ?? 'replaced',
        replacedById: issued.token_id,
      },
    });
    await recordAccessChange(tx, operator, wallet.id, {
      action: 'replaced',
      token: { id: issued.token_id, kind: issued.kind, last4: issued.last4 },
      previousTokenId: old.id,
      reason: request.reason ?? null,
    });
    return issued;
  });
}
