import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { resumeCancelledFreeze, takeBackFreezeFee } from './freeze-provider';
import type { FreezeJobDeps } from './start-freezes';

/** How long a start attempt is left to undo its own work before the sweep takes over. */
export const UNDO_AFTER_MS = 10 * 60_000;
const BATCH = 20;

/**
 * Undoes what the start job asked Stripe for a freeze that was cancelled before it started (the
 * member or staff cancelled it, or the membership stopped being active, while the job paused the
 * subscription and billed the fee): the subscription resumed unless a freeze of the membership
 * is running now (that one owns the pause), and the fee invoice voided or refunded. Each step is
 * idempotent, so running it twice is harmless; provider_undone_at is stamped only when both are
 * done, so a failure leaves it for the sweep. Returns whether it finished the undo now.
 */
export async function undoFreezeStart(deps: { db: Db; stripe: Stripe }, freezeId: string, now: Date) {
  const freeze = await deps.db.membershipFreeze.findUniqueOrThrow({
    where: { id: freezeId },
    include: { membership: true },
  });
  if (freeze.status !== 'cancelled' || freeze.startedAt || !freeze.providerRequestedAt || freeze.providerUndoneAt) {
    return false;
  }
  const { membership } = freeze;
  if (membership.stripeSubscriptionId && membership.status !== 'frozen') {
    await resumeCancelledFreeze(deps.stripe, membership, freeze);
  }
  if (freeze.stripeFeeInvoiceId) await takeBackFreezeFee(deps.stripe, freeze, freeze.stripeFeeInvoiceId);
  const done = await deps.db.membershipFreeze.updateMany({
    where: { id: freezeId, providerUndoneAt: null },
    data: { providerUndoneAt: now },
  });
  return done.count === 1;
}

/**
 * The retry of undoFreezeStart: cancelled freezes the start job asked Stripe for at least
 * UNDO_AFTER_MS ago (so never one a running attempt will still undo itself) and not undone yet.
 * A failure is logged and retried by the next run. Returns how many were undone.
 */
export async function undoCancelledStarts(deps: FreezeJobDeps, now: Date): Promise<number> {
  const stripe = deps.stripe;
  if (!stripe) return 0;
  const pending = await deps.db.membershipFreeze.findMany({
    where: {
      status: 'cancelled',
      startedAt: null,
      providerRequestedAt: { lte: new Date(now.getTime() - UNDO_AFTER_MS) },
      providerUndoneAt: null,
    },
    select: { id: true },
    orderBy: { providerRequestedAt: 'asc' },
    take: BATCH,
  });
  let undone = 0;
  for (const { id } of pending) {
    try {
      if (await undoFreezeStart({ db: deps.db, stripe }, id, now)) undone += 1;
    } catch (error) {
      deps.logger?.warn({ err: error, freezeId: id }, 'could not undo the start of a cancelled membership freeze');
    }
  }
  return undone;
}
