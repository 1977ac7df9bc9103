import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import Stripe from 'stripe';
import { findProviderRefund } from '../payments/find-provider-refund';
import { providerRefusal } from '../payments/provider-call';
import { completeOrderRefund } from './complete-order-refund';

/** An operator's order refund reserved for Stripe to pay: the payment it is asked of. */
export type ProviderRefundRequest = { tenantId: string; orderId: string; refundId: string; paymentIntentId: string };

/**
 * Asks Stripe for the refund an operator's request reserved, keyed by the refund's id. A refusal
 * undoes the reservation (502 payment_provider_error); no answer leaves it pending (409
 * refund_in_progress) for its notification, a retry of the request, or the
 * settle-stuck-order-refunds job (settleOrAskAgain) to settle.
 */
export async function askProviderRefund(db: Db, stripe: Stripe, asked: ProviderRefundRequest): Promise<void> {
  const refund = await db.orderRefund.findUniqueOrThrow({ where: { id: asked.refundId } });
  let providerRefund: Stripe.Refund;
  try {
    providerRefund = await stripe.refunds.create(
      {
        payment_intent: asked.paymentIntentId,
        amount: refund.amountCents,
        metadata: { tenant_id: asked.tenantId, order_id: asked.orderId, order_refund_id: refund.id },
      },
      { idempotencyKey: `order-refund-${refund.id}` },
    );
  } catch (error) {
    // A key still in use (409: the first run's request is still at Stripe) is no answer either.
    const refused =
      error instanceof Stripe.errors.StripeError &&
      !(error instanceof Stripe.errors.StripeConnectionError) &&
      !(error instanceof Stripe.errors.StripeIdempotencyError) &&
      error.statusCode !== 409 &&
      (error.statusCode ?? 500) < 500;
    if (!refused) {
      // No answer, or Stripe's own failure: the refund may exist. It stays pending (its value
      // held) until Stripe's record of it is found by its order_refund_id.
      throw new AppError(
        'refund_in_progress',
        {
          refund_id: refund.id,
          message: 'the payment provider did not answer; the refund stays pending until it reports the outcome',
        },
        { cause: error },
      );
    }
    await db.$transaction((tx) => completeOrderRefund(tx, refund.id, { status: 'failed', providerRefundId: null }));
    // Refused (Stripe refunded nothing): failed, its value refundable again. A refusal of the
    // service's own key or rate is answered 503, not shown.
    throw providerRefusal(error, { refund_id: refund.id });
  }
  await recordProviderRefund(db, refund.id, providerRefund);
}

/**
 * A pending refund whose Stripe answer was never heard, as booking refunds are reconciled: Stripe
 * lists the payment's refunds, and ours (its metadata.order_refund_id) is recorded; when none is
 * ours, the request never arrived and is sent again, under the same key. Sending again only when
 * Stripe shows none stays safe after Stripe has forgotten the key (a day).
 */
export async function settleOrAskAgain(db: Db, stripe: Stripe, asked: ProviderRefundRequest): Promise<void> {
  const ours = await findProviderRefund(stripe, asked.paymentIntentId, {
    id: asked.refundId,
    providerRefundId: null,
    metadataKey: 'order_refund_id',
  });
  if (ours) return recordProviderRefund(db, asked.refundId, ours);
  await askProviderRefund(db, stripe, asked);
}

/** Records Stripe's refund for ours: settled when final, else its id, for the notifications. */
async function recordProviderRefund(db: Db, refundId: string, providerRefund: Stripe.Refund): Promise<void> {
  const status =
    providerRefund.status === 'succeeded' ? 'succeeded' : providerRefund.status === 'failed' ? 'failed' : null;
  await db.$transaction(async (tx) => {
    if (status) return completeOrderRefund(tx, refundId, { status, providerRefundId: providerRefund.id });
    await tx.orderRefund.updateMany({
      where: { id: refundId, providerRefundId: null },
      data: { providerRefundId: providerRefund.id },
    });
  });
}
