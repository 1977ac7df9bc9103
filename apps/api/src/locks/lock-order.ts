import type { Tx } from '@booking/db';

/**
 * The house lock order. A transaction that takes several locks takes them in this order, so no
 * two transactions ever wait on each other in a cycle (PostgreSQL would abort one of them with a
 * deadlock error). Taking another lock of the same kind is allowed (the functions that lock
 * several rows of one kind lock them in id order).
 *
 * - register, sale_reference: transaction-scoped advisory locks (one open shift per register;
 *   one sale per provider payment).
 * - shift: cash taken in a shift share-locks it so closing waits for it; it comes before the
 *   booking the cash pays.
 * - booking: the first row lock of every change to a booking.
 * - refund: a refund of the locked booking.
 * - slot: the seats; every change of booked seats goes through it.
 * - payment, gift_card: money; a payment's gift card after the payment.
 * - customer: last, so a booking's customer upsert never waits while holding a customer lock.
 */
export const LOCK_ORDER = [
  'register',
  'shift',
  'sale_reference',
  'booking',
  'refund',
  'slot',
  'payment',
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
/** The highest lock kind each open transaction holds; entries go with their transaction. */
const highest = new WeakMap<Tx, number>();

/**
 * Claims the next lock of a transaction, refusing one that comes before a lock it already
 * holds. Every lock function of this module calls it before its statement, so an out-of-order
 * path fails the first test that runs it instead of deadlocking in production now and then.
 */
export function claimLock(tx: Tx, kind: LockKind): void {
  const rank = RANK.get(kind)!;
  const held = highest.get(tx);
  if (held !== undefined && rank < held) throw new LockOrderError(kind, LOCK_ORDER[held]!);
  highest.set(tx, rank);
}
