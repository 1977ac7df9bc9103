import type { Db, Prisma } from '@booking/db';
import { AppError } from '@booking/domain';
import type { EntriesQuery, WalletsQuery } from './wallet-schemas';
import { walletSummary } from './wallet-view';

/** The tenant's wallets, oldest first, keyed on (created_at, id) like every list of the v1 API. */
export async function listWallets(db: Db, tenantId: string, query: WalletsQuery) {
  const limit = Number(query.limit ?? 20);
  const after = query.starting_after
    ? await db.wallet.findFirst({
        where: { id: query.starting_after, tenantId },
        select: { id: true, createdAt: true },
      })
    : null;
  if (query.starting_after && !after) throw new AppError('wallet_not_found', 'starting_after names no wallet');
  const where: Prisma.WalletWhereInput = {
    tenantId,
    ...(query.customer_id && { customerId: query.customer_id }),
    ...(query.currency && { currency: query.currency }),
    ...(after && {
      OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }],
    }),
  };
  const rows = await db.wallet.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit + 1 });
  const page = rows.slice(0, limit);
  return {
    data: page.map(walletSummary),
    next_starting_after: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}

/** A wallet's ledger, newest first, in the order it was written. */
export async function listWalletEntries(db: Db, tenantId: string, walletId: string, query: EntriesQuery) {
  const limit = Number(query.limit ?? 20);
  const wallet = await db.wallet.findFirst({ where: { id: walletId, tenantId }, select: { id: true } });
  if (!wallet) throw new AppError('wallet_not_found');
  const after = query.starting_after
    ? await db.walletEntry.findFirst({ where: { id: query.starting_after, walletId }, select: { seq: true } })
    : null;
  if (query.starting_after && !after)
    throw new AppError('wallet_not_found', 'starting_after names no entry of this wallet');
  const rows = await db.walletEntry.findMany({
    where: { walletId, ...(after && { seq: { lt: after.seq } }) },
    orderBy: { seq: 'desc' },
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  return {
    data: page.map((entry) => ({
      entry_id: entry.id,
      kind: entry.kind,
      balance_delta: entry.balanceDelta,
      held_delta: entry.heldDelta,
      balance_after: entry.balanceAfter,
      held_after: entry.heldAfter,
      lot_id: entry.lotId,
      order_id: entry.orderId,
      tender_id: entry.tenderId,
      refund_id: entry.refundId,
      actor_user_id: entry.actorKeyId,
      reason: entry.reason,
      created_at: entry.createdAt.toISOString(),
    })),
    next_starting_after: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}
