import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import Stripe from 'stripe';
import { providerRefusal } from '../payments/provider-call';
import type { HoldStore } from '../holds/hold-store';
import type { Operator } from '../operators/api-key-auth';
import { askProvider, recordProviderAnswer, refundView } from './create-refund';
import { settleOurRefund } from './reconcile-provider-refunds';
import type { RefundResponse } from './refund-schemas';

type Deps = { db: Db; holds: HoldStore; stripe: Stripe | null };

/**
 * `POST /api/refunds/{id}/reconcile`: settles a refund stuck in pending because the provider's
 * answer never came (the process died between reserving and asking, or the connection failed) and
 * so no notification ever will.
 *
 * The provider is asked for the refunds of the payment intent. One of them is ours (its id, or our
 * metadata.refund_id): the request did arrive, and it is settled exactly as its notification would
 * settle it. None is: the request never arrived, and it is sent again, identical and under the same
 * idempotency key `refund-<id>` (the provider applies a key once, so a request that arrives late or
 * concurrently still refunds once), then settled from the answer as a first answer would be. Only
 * a pending refund moves, once, under its row lock, whoever settles it first.
 */
export async function reconcileRefund(deps: Deps, operator: Operator, refundId: string): Promise<RefundResponse> {
  const { stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');

  const refund = await deps.db.refund.findFirst({
    where: { id: refundId, tenantId: operator.tenantId },
    include: { payment: { select: { providerReference: true } } },
  });
  if (!refund) throw new AppError('refund_not_found');
  if (refund.status !== 'pending') {
    throw new AppError('refund_not_pending', { refund_id: refund.id, status: refund.status });
  }
  const paymentIntentId = refund.payment.providerReference!;

  const found = await findAtProvider(stripe, paymentIntentId, refund);
  if (found) {
    const release = await deps.db.$transaction((tx) => settleOurRefund(tx, deps.holds, refund, found));
    if (release) await deps.holds.releaseAfterCommit(release.slotId, release.holdId, release.seats);
    return refundView(deps.db, refund.id);
  }

  const answer = await askProvider(stripe, refund.bookingId, {
    refundId: refund.id,
    paymentIntentId,
    amountCents: refund.amountCents,
  });
  return recordProviderAnswer(deps, refund.bookingId, refund.id, answer);
}

/** The provider's refund for ours, if the provider ever received the request. */
async function findAtProvider(
  stripe: Stripe,
  paymentIntentId: string,
  refund: { id: string; providerRefundId: string | null },
): Promise<Stripe.Refund | null> {
  let byMetadata: Stripe.Refund | null = null;
  try {
    // Auto-pagination: every refund of the intent, 100 a page.
    for await (const candidate of stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 })) {
      if (refund.providerRefundId && candidate.id === refund.providerRefundId) return candidate;
      if (candidate.metadata?.refund_id === refund.id) byMetadata ??= candidate;
    }
  } catch (error) {
    if (!(error instanceof Stripe.errors.StripeError)) throw error;
    // Without the list nothing can be concluded (sending again is only safe when the provider
    // shows no refund): the refund stays as it is.
    const unanswered = error instanceof Stripe.errors.StripeConnectionError || (error.statusCode ?? 0) >= 500;
    if (unanswered) {
      throw new AppError(
        'refund_in_progress',
        {
          refund_id: refund.id,
          message: 'the payment provider did not answer; the refund stays pending, try again later',
        },
        { cause: error },
      );
    }
    throw providerRefusal(error, { refund_id: refund.id });
  }
  return byMetadata;
}
