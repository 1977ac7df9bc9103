import type { Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import { lockWalletUnlessBusy } from '../locks';
import { debitWallet } from './wallet-ledger';

const BATCH = 100;

/**
 * Expires what is left of wallet lots past their expiry: one batch of wallets, each in its own
 * transaction, one wallet.expired per wallet. Only unheld value expires, and holds count against
 * the soonest-expiring value first, because that is what capturing them spends: value an open
 * till order holds stays until it is captured (spent) or released (and then expires on a later
 * run), so the customer's balance does not depend on whether this job ran before the till.
 *
 * Safe on any number of worker pods at once: each wallet is locked SKIP LOCKED, and the amount
 * is computed under the lock, so a wallet another run is expiring is skipped, and one it has
 * expired has nothing left to expire. Returns how many wallets lost value; wallets whose expired
 * value is all held are not candidates, so a caller looping until 0 stops.
 */
export async function expireWalletFunds(deps: { db: Db }, now = new Date()): Promise<number> {
  const candidates = await deps.db.$queryRaw<{ wallet_id: string }[]>`
    SELECT l.wallet_id FROM wallet_lots l JOIN wallets w ON w.id = l.wallet_id
    WHERE l.expires_at <= ${now} AND l.remaining_cents > 0
    GROUP BY l.wallet_id, w.held_cents
    HAVING SUM(l.remaining_cents) > w.held_cents
    LIMIT ${BATCH}`;
  let expired = 0;
  for (const { wallet_id: walletId } of candidates) {
    const done = await deps.db.$transaction(async (tx) => {
      const wallet = await lockWalletUnlessBusy(tx, walletId);
      if (!wallet) return false;
      const [due] = await tx.$queryRaw<{ cents: bigint }[]>`
        SELECT COALESCE(SUM(remaining_cents), 0) AS cents FROM wallet_lots
        WHERE wallet_id = ${walletId}::uuid AND expires_at <= ${now} AND remaining_cents > 0`;
      const amount = Number(due!.cents) - wallet.heldCents;
      if (amount <= 0) return false;
      const { lotIds } = await debitWallet(tx, wallet, {
        kind: 'expire',
        amountCents: amount,
        fromHold: false,
        expiredBy: now,
      });
      await recordEvent(tx, {
        tenantId: wallet.tenantId,
        name: 'wallet.expired',
        entityType: 'wallet',
        entityId: wallet.id,
        fields: {
          wallet_id: wallet.id,
          customer_id: wallet.customerId,
          expired_cents: amount,
          currency: wallet.currency,
          balance_cents: wallet.balanceCents,
          lot_ids: lotIds,
        },
      });
      return true;
    });
    if (done) expired += 1;
  }
  return expired;
}
