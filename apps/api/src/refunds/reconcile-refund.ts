import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { findProviderRefund } from '../payments/find-provider-refund';
import type { Operator } from '../operators/api-key-auth';
import { askProvider, recordProviderAnswer, refundView } from './create-refund';
import { settleOurRefund } from './reconcile-provider-refunds';
import type { SettleDeps } from './refund-bookkeeping';
import type { RefundResponse } from './refund-schemas';

type Deps = SettleDeps & { db: Db; stripe: Stripe | null };

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

  const found = await findProviderRefund(stripe, paymentIntentId, { ...refund, metadataKey: 'refund_id' });
  if (found) {
    const release = await deps.db.$transaction((tx) => settleOurRefund(tx, deps, refund, found));
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
