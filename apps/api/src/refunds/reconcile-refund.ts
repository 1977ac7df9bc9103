import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import type { Operator } from '../operators/api-key-auth';
import type { SettleDeps } from './refund-bookkeeping';
import type { RefundResponse } from './refund-schemas';
import { settleOrAskAgain } from './settle-or-ask-again';

type Deps = SettleDeps & { db: Db; stripe: Stripe | null };

/**
 * `POST /api/refunds/{id}/reconcile`: settles a refund stuck in pending because the provider's
 * answer never came (the process died between reserving and asking, or the connection failed) and
 * so no notification ever will: from the provider's record of it, or by sending it again when the
 * provider shows none and never named one (settleOrAskAgain). The settle-stuck-booking-refunds job
 * does the same, but sends again only while the provider keeps the key (a day); after that,
 * sending again is the operator's call, made here.
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
  return settleOrAskAgain({ ...deps, stripe }, { ...refund, paymentIntentId: refund.payment.providerReference! });
}
