import { randomUUID } from 'node:crypto';
import type { Tx, WalletEntryKind, WalletLotSource } from '@booking/db';
import { AppError } from '@booking/domain';
import type { LockedWallet } from '../locks';

/**
 * The one home of a wallet's value. Every change is a ledger entry written here, on a wallet the
 * caller has locked (locks/wallet-locks.ts); a database trigger applies the entry to the wallet's
 * balance and hold, CHECK constraints refuse a negative balance or a hold above it, and at commit
 * a deferred trigger refuses a wallet whose balance differs from its lots' remainders. So the
 * code's checks below give callers a clear 409, and the database guarantees the invariant even
 * if a caller forgot one.
 *
 * - balance = Σ entries.balance_delta = Σ lots.remaining; held = Σ entries.held_delta.
 * - available = balance - held: what a new hold, a funding return or the expiry job may take.
 * - Value is spent first-expiring-first (lots without expiry last), so the customer loses as
 *   little as possible to expiry.
 */

/** Who and what an entry is about, for the ledger's audit trail. */
export interface EntryRefs {
  orderId?: string;
  tenderId?: string;
  refundId?: string;
  actorKeyId?: string;
  reason?: string;
}

export const availableCents = (wallet: LockedWallet) => wallet.balanceCents - wallet.heldCents;

/**
 * The most a wallet may hold (10,000,000.00): stored value is not a bank account, and the
 * database's CHECK keeps balances far inside their column. A credit above it is 409.
 */
export const WALLET_MAX_BALANCE_CENTS = 1_000_000_000;

/** Whether `amountCents` more still fits in the wallet. */
export const fitsInWallet = (wallet: LockedWallet, amountCents: number) =>
  wallet.balanceCents + amountCents <= WALLET_MAX_BALANCE_CENTS;

async function writeEntry(
  tx: Tx,
  wallet: LockedWallet,
  entry: { kind: WalletEntryKind; balanceDelta: number; heldDelta: number; lotId?: string } & EntryRefs,
): Promise<void> {
  const [after] = await tx.$queryRaw<{ balance_after: number; held_after: number }[]>`
    INSERT INTO wallet_entries (id, wallet_id, kind, balance_delta, held_delta, lot_id, order_id, tender_id,
                                refund_id, actor_key_id, reason)
    VALUES (${randomUUID()}::uuid, ${wallet.id}::uuid, ${entry.kind}::wallet_entry_kind, ${entry.balanceDelta},
            ${entry.heldDelta}, ${entry.lotId ?? null}::uuid, ${entry.orderId ?? null}::uuid,
            ${entry.tenderId ?? null}::uuid, ${entry.refundId ?? null}::uuid, ${entry.actorKeyId ?? null}::uuid,
            ${entry.reason ?? null})
    RETURNING balance_after, held_after`;
  wallet.balanceCents = after!.balance_after;
  wallet.heldCents = after!.held_after;
}

function assertPositive(amountCents: number): void {
  if (!Number.isSafeInteger(amountCents) || amountCents <= 0) {
    throw new Error(`a wallet amount must be a positive integer, got ${amountCents}`);
  }
}

/**
 * Adds value as a new lot: a funding (`fund`), a refund of a wallet tender (`refund_credit`) or
 * an admin's goodwill credit (`adjustment`).
 */
export async function creditWallet(
  tx: Tx,
  wallet: LockedWallet,
  credit: {
    kind: 'fund' | 'refund_credit' | 'adjustment';
    source: WalletLotSource;
    amountCents: number;
    expiresAt: Date | null;
  } & EntryRefs,
): Promise<{ lotId: string }> {
  assertPositive(credit.amountCents);
  if (!fitsInWallet(wallet, credit.amountCents)) {
    throw new AppError('wallet_limit_exceeded', {
      max_balance_cents: WALLET_MAX_BALANCE_CENTS,
      balance_cents: wallet.balanceCents,
    });
  }
  const lotId = randomUUID();
  await tx.$executeRaw`
    INSERT INTO wallet_lots (id, wallet_id, source, order_id, amount_cents, remaining_cents, expires_at)
    VALUES (${lotId}::uuid, ${wallet.id}::uuid, ${credit.source}::wallet_lot_source, ${credit.orderId ?? null}::uuid,
            ${credit.amountCents}, ${credit.amountCents}, ${credit.expiresAt})`;
  await writeEntry(tx, wallet, { ...credit, balanceDelta: credit.amountCents, heldDelta: 0, lotId });
  return { lotId };
}

/** Sets value aside for an open order's tender or a refund in flight; 409 when not available. */
export async function holdWalletValue(tx: Tx, wallet: LockedWallet, amountCents: number, refs: EntryRefs) {
  assertPositive(amountCents);
  if (availableCents(wallet) < amountCents) {
    throw new AppError('insufficient_wallet_balance', {
      available_cents: availableCents(wallet),
      currency: wallet.currency,
    });
  }
  await writeEntry(tx, wallet, { kind: 'hold', balanceDelta: 0, heldDelta: amountCents, ...refs });
}

/** Gives held value back to the available balance (a void, an abandoned order, a failed refund). */
export async function releaseWalletHold(tx: Tx, wallet: LockedWallet, amountCents: number, refs: EntryRefs) {
  assertPositive(amountCents);
  await writeEntry(tx, wallet, { kind: 'release', balanceDelta: 0, heldDelta: -amountCents, ...refs });
}

/**
 * Takes value out of the wallet: held value captured by a settled order (`capture`), or held
 * value returned with a refund of its funding (`funding_return` with `fromHold`), or available
 * value taken at once (`funding_return`, `expire` and `adjustment` without a hold). Lots are
 * drawn first-expiring-first; `expiredOnly` limits them to lots past their expiry (the expiry
 * job), and `preferOrderId` draws that order's lots first (a refund takes back its own funding).
 */
export async function debitWallet(
  tx: Tx,
  wallet: LockedWallet,
  debit: {
    kind: 'capture' | 'funding_return' | 'expire' | 'adjustment';
    amountCents: number;
    fromHold: boolean;
    preferOrderId?: string;
    expiredBy?: Date;
  } & EntryRefs,
): Promise<{ lotIds: string[] }> {
  assertPositive(debit.amountCents);
  // Taking more than a hold set aside is a bug in the caller, not something a client can ask for.
  if (debit.fromHold && wallet.heldCents < debit.amountCents) {
    throw new Error(`wallet ${wallet.id}: ${debit.amountCents} taken from a hold of ${wallet.heldCents}`);
  }
  if (!debit.fromHold && availableCents(wallet) < debit.amountCents) {
    throw new AppError('insufficient_wallet_balance', {
      available_cents: availableCents(wallet),
      currency: wallet.currency,
    });
  }
  const lotIds = await drawLots(tx, wallet.id, debit.amountCents, debit.preferOrderId ?? null, debit.expiredBy ?? null);
  const { kind, amountCents, fromHold, preferOrderId: _prefer, expiredBy: _expired, ...refs } = debit;
  await writeEntry(tx, wallet, {
    kind,
    balanceDelta: -amountCents,
    heldDelta: fromHold ? -amountCents : 0,
    ...refs,
  });
  return { lotIds };
}

/**
 * Takes `amountCents` from the wallet's lots in spending order, in one statement: each lot gives
 * what is left of the amount after the lots before it. The wallet row is locked, so its lots do
 * not change under us. Without a preferred order no lot is preferred: an admin's credit (a lot
 * with no order) must not come before value that expires, or the customer loses that value.
 */
async function drawLots(
  tx: Tx,
  walletId: string,
  amountCents: number,
  preferOrderId: string | null,
  expiredBy: Date | null,
): Promise<string[]> {
  const drawn = await tx.$queryRaw<{ id: string; taken: number }[]>`
    WITH ordered AS (
      SELECT id, remaining_cents,
             SUM(remaining_cents) OVER (
               ORDER BY (order_id = ${preferOrderId}::uuid) IS TRUE DESC, expires_at ASC NULLS LAST, created_at, id
               ROWS UNBOUNDED PRECEDING) AS running
      FROM wallet_lots
      WHERE wallet_id = ${walletId}::uuid AND remaining_cents > 0
        AND (${expiredBy}::timestamptz IS NULL OR expires_at <= ${expiredBy}::timestamptz)
    ), take AS (
      SELECT id, LEAST(remaining_cents, ${amountCents} - (running - remaining_cents))::int AS taken
      FROM ordered WHERE running - remaining_cents < ${amountCents}
    )
    UPDATE wallet_lots l SET remaining_cents = l.remaining_cents - take.taken
    FROM take WHERE l.id = take.id
    RETURNING l.id, take.taken`;
  const total = drawn.reduce((sum, lot) => sum + lot.taken, 0);
  // The deferred balance check would refuse the commit anyway; failing here names the cause.
  if (total !== amountCents) throw new Error(`wallet ${walletId}: lots hold ${total} of the ${amountCents} drawn`);
  return drawn.map((lot) => lot.id);
}

/** When value funded now expires, by the deployment's WALLET_FUNDS_EXPIRY_DAYS (0: never). */
export function fundsExpiry(now: Date, expiryDays: number): Date | null {
  return expiryDays === 0 ? null : new Date(now.getTime() + expiryDays * 86_400_000);
}
