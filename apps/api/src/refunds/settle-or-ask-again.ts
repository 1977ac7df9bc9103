import { AppError } from '@booking/domain';
import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { findProviderRefund } from '../payments/find-provider-refund';
import { askProvider, recordProviderAnswer, refundView } from './create-refund';
import { settleOurRefund } from './reconcile-provider-refunds';
import type { SettleDeps } from './refund-bookkeeping';
import type { RefundResponse } from './refund-schemas';

type Deps = SettleDeps & { db: Db; stripe: Stripe };

/** A pending booking refund, as Stripe is asked about it. */
export interface PendingRefund {
  id: string;
  bookingId: string;
  amountCents: number;
  providerRefundId: string | null;
  paymentIntentId: string;
}

/**
 * A pending booking refund settled from Stripe's record of it, for the reconcile route (an
 * operator's deliberate call): settleFromProvider, and when Stripe shows none, sendAgain.
 */
export async function settleOrAskAgain(deps: Deps, refund: PendingRefund): Promise<RefundResponse> {
  return (await settleFromProvider(deps, refund)) ?? sendAgain(deps, refund);
}

/**
 * Settles a pending booking refund from Stripe's record of it, for the reconcile route and the
 * settle-stuck-booking-refunds job. Stripe lists the payment intent's refunds: one of them is ours
 * (its provider id, or our metadata.refund_id), and it is settled exactly as its notification
 * would settle it. A refund Stripe did name but does not list (a key that sees another account,
 * say) stays pending, 409 refund_in_progress. Null when none is ours and Stripe never named one:
 * the request never arrived. Only a pending refund moves, once, under its row lock, whoever
 * settles it first.
 */
export async function settleFromProvider(deps: Deps, refund: PendingRefund): Promise<RefundResponse | null> {
  const found = await findProviderRefund(deps.stripe, refund.paymentIntentId, { ...refund, metadataKey: 'refund_id' });
  if (found) {
    const release = await deps.db.$transaction((tx) => settleOurRefund(tx, deps, refund, found));
    if (release) await deps.holds.releaseAfterCommit(release.slotId, release.holdId, release.seats);
    return refundView(deps.db, refund.id);
  }
  if (refund.providerRefundId) {
    throw new AppError('refund_in_progress', {
      refund_id: refund.id,
      message: 'the payment provider does not list the refund it reported; the refund stays pending',
    });
  }
  return null;
}

/**
 * Sends again a refund Stripe shows none of (settleFromProvider), identical and under the same
 * idempotency key `refund-<id>`, so a request that arrives late or concurrently still refunds
 * once while Stripe keeps the key (a day), then settles it from the answer as a first answer
 * would be. Read again first: one a notification or another caller settled, or Stripe named,
 * since it was looked up is not sent.
 */
export async function sendAgain(deps: Deps, refund: PendingRefund): Promise<RefundResponse> {
  const current = await deps.db.refund.findUniqueOrThrow({
    where: { id: refund.id },
    select: { status: true, providerRefundId: true },
  });
  if (current.status !== 'pending' || current.providerRefundId !== null) return refundView(deps.db, refund.id);
  const answer = await askProvider(deps.stripe, {
    refundId: refund.id,
    bookingId: refund.bookingId,
    paymentIntentId: refund.paymentIntentId,
    amountCents: refund.amountCents,
  });
  return recordProviderAnswer(deps, refund.bookingId, refund.id, answer);
}
