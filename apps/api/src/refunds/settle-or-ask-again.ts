import { AppError } from '@booking/domain';
import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { findProviderRefund } from '../payments/find-provider-refund';
import { askProvider, recordProviderAnswer, refundView } from './create-refund';
import { settleOurRefund } from './reconcile-provider-refunds';
import type { SettleDeps } from './refund-bookkeeping';
import type { RefundResponse } from './refund-schemas';

/** A pending booking refund, as Stripe is asked about it. */
export interface PendingRefund {
  id: string;
  bookingId: string;
  amountCents: number;
  providerRefundId: string | null;
  paymentIntentId: string;
}

/**
 * A pending booking refund settled from Stripe's record of it, for the reconcile route and the
 * settle-stuck-booking-refunds job. Stripe lists the payment intent's refunds: one of them is ours
 * (its provider id, or our metadata.refund_id), and it is settled exactly as its notification
 * would settle it. None is and Stripe never named one: the request never arrived, and it is sent
 * again, identical and under the same idempotency key `refund-<id>` (Stripe applies a key once,
 * so a request that arrives late or concurrently still refunds once), then settled from the
 * answer as a first answer would be. Sending again only when Stripe shows none stays safe after
 * Stripe has forgotten the key (a day). A refund Stripe did name is never asked for again: one it
 * does not list (a key that sees another account, say) stays pending, 409 refund_in_progress.
 * Only a pending refund moves, once, under its row lock, whoever settles it first.
 */
export async function settleOrAskAgain(
  deps: SettleDeps & { db: Db; stripe: Stripe },
  refund: PendingRefund,
): Promise<RefundResponse> {
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
  const answer = await askProvider(deps.stripe, refund.bookingId, {
    refundId: refund.id,
    paymentIntentId: refund.paymentIntentId,
    amountCents: refund.amountCents,
  });
  return recordProviderAnswer(deps, refund.bookingId, refund.id, answer);
}
