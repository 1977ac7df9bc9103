import type { Tx } from '@booking/db';

/**
 * The house lock order. A transaction that takes several locks takes them in this order, so no
 * two transactions ever wait on each other in a cycle (PostgreSQL would abort one of them with a
 * deadlock error). Taking another lock of the same kind is allowed.
 *
 * - register, sale_reference: transaction-scoped advisory locks (one open shift per register;
 *   one sale per provider payment).
 * - shift: cash taken in a shift share-locks it so closing waits for it; it comes before the
 *   booking the cash pays.
 * - order: the first row lock of every change to an order (its tenders, refunds, payment).
 * - booking: the first row lock of every change to a booking.
 * - refund: a refund of the locked booking.
 * - slot: the seats; every change of booked seats goes through it.
 * - payment, wallet, gift_card: money; a payment's gift card after the payment; an order's
 *   wallets before its gift cards (both in id order).
 * - membership: after the booking and slot that use it and the payment that pays it, before the
 *   wallets and gift cards of a till order that sells it or takes its member discount.
 * - customer: last, so a booking's customer upsert never waits while holding a customer lock.
 *
 * Several rows of one kind are locked in id order, in one statement (see lockSlots).
 */
export const LOCK_ORDER = [
  'register',
  'shift',
  'sale_reference',
  'order',
  'booking',
  'refund',
  'slot',
  'payment',
  'membership',
  'wallet',
  'gift_card',
  'customer',
] as const;

export type LockKind = (typeof LOCK_ORDER)[number];

/** Thrown when code takes a lock out of order: a bug that could deadlock under load. */
export class LockOrderError extends Error {
  constructor(taken: LockKind, after: LockKind) {
    super(`lock order violated: ${taken} taken after ${after} (order: ${LOCK_ORDER.join(' → ')})`);
    this.name = 'LockOrderError';
  }
}

const RANK = new Map<LockKind, number>(LOCK_ORDER.map((kind, rank) => [kind, rank]));

/** What an open transaction holds: its highest lock kind, and the rows it named. */
interface Held {
  highest: number;
  rows: Set<string>;
}
/** Entries go with their transaction: Prisma makes a new client object per transaction. */
const held = new WeakMap<Tx, Held>();

/**
 * Claims the next lock of a transaction, refusing one that comes before a lock it already
 * holds. Every lock function of this module calls it before its statement, so an out-of-order
 * path fails the first test that runs it instead of deadlocking in production now and then.
 * Locking again a row the transaction holds already (`rowId`) is always fine: PostgreSQL grants
 * it at once. The check sees only this module's locks: an UPDATE's implicit row lock is kept in
 * order by hand (see ARCHITECTURE.md, "Lock order").
 */
export function claimLock(tx: Tx, kind: LockKind, rowId?: string): void {
  const rank = RANK.get(kind)!;
  const mine = held.get(tx) ?? { highest: -1, rows: new Set<string>() };
  const row = rowId === undefined ? undefined : `${kind}:${rowId}`;
  if (row !== undefined && mine.rows.has(row)) return;
  if (rank < mine.highest) throw new LockOrderError(kind, LOCK_ORDER[mine.highest]!);
  mine.highest = rank;
  if (row !== undefined) mine.rows.add(row);
  held.set(tx, mine);
}
