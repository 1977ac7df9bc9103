import type { Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { hashWalletToken } from '@booking/signing';

/**
 * The wallet a card or QR secret presented at the till spends, found by the secret's hash (the
 * secret itself is never stored). A revoked token is refused with its own code, so staff can
 * tell a customer their card was replaced rather than that it does not exist.
 */
export async function findWalletByToken(
  tx: Tx,
  tenantId: string,
  secret: string,
): Promise<{ walletId: string; tokenId: string }> {
  const token = await tx.walletToken.findUnique({
    where: { tenantId_tokenHash: { tenantId, tokenHash: hashWalletToken(secret) } },
    select: { id: true, walletId: true, status: true },
  });
  if (!token) throw new AppError('wallet_token_invalid', 'no wallet token of this tenant has this secret');
  if (token.status === 'revoked') throw new AppError('wallet_token_revoked', { token_id: token.id });
  return { walletId: token.walletId, tokenId: token.id };
}
