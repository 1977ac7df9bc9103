import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import type { WalletSummary, WalletTokenView, WalletView } from './wallet-schemas';

type WalletRow = {
  id: string;
  customerId: string;
  currency: string;
  balanceCents: number;
  heldCents: number;
  createdAt: Date;
  updatedAt: Date;
};

export function walletSummary(wallet: WalletRow): WalletSummary {
  return {
    wallet_id: wallet.id,
    customer_id: wallet.customerId,
    currency: wallet.currency,
    balance_cents: wallet.balanceCents,
    held_cents: wallet.heldCents,
    available_cents: wallet.balanceCents - wallet.heldCents,
    created_at: wallet.createdAt.toISOString(),
    updated_at: wallet.updatedAt.toISOString(),
  };
}

export function tokenView(token: {
  id: string;
  walletId: string;
  kind: 'card' | 'qr';
  last4: string;
  status: 'active' | 'revoked';
  replacedById: string | null;
  createdAt: Date;
  revokedAt: Date | null;
}): WalletTokenView {
  return {
    token_id: token.id,
    wallet_id: token.walletId,
    kind: token.kind,
    last4: token.last4,
    status: token.status,
    replaced_by_id: token.replacedById,
    created_at: token.createdAt.toISOString(),
    revoked_at: token.revokedAt?.toISOString() ?? null,
  };
}

/** A wallet of the tenant with its lots (those with value left first) and its tokens. */
export async function loadWalletView(db: Db | Tx, tenantId: string, walletId: string): Promise<WalletView> {
  const wallet = await db.wallet.findFirst({
    where: { id: walletId, tenantId },
    include: {
      lots: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 100 },
      tokens: { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] },
    },
  });
  if (!wallet) throw new AppError('wallet_not_found');
  const lots = [...wallet.lots].sort((a, b) => Number(b.remainingCents > 0) - Number(a.remainingCents > 0));
  return {
    ...walletSummary(wallet),
    lots: lots.map((lot) => ({
      lot_id: lot.id,
      source: lot.source,
      order_id: lot.orderId,
      amount_cents: lot.amountCents,
      remaining_cents: lot.remainingCents,
      expires_at: lot.expiresAt?.toISOString() ?? null,
      created_at: lot.createdAt.toISOString(),
    })),
    tokens: wallet.tokens.map(tokenView),
  };
}
