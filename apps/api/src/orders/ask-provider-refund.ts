import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { findProviderRefund } from '../payments/find-provider-refund';
import { madeNothing, providerRefusal } from '../payments/provider-call';
import { providerOutcome } from '../refunds/create-refund';
import { completeOrderRefund } from './complete-order-refund';

/** An operator's order refund reserved for Stripe to pay: the payment it is asked of. */
export type ProviderRefundRequest = { tenantId: string; orderId: string; refundId: string; paymentIntentId: string };

/**
 * Asks Stripe for the refund an operator's request reserved, keyed by the refund's id. A refusal
 * undoes the reservation (502 payment_provider_error); no answer leaves it pending (409
 * refund_in_progress) for its notification, a retry of the request (settleOrAskAgain), or the
 * settle-stuck-order-refunds job to settle. Read first: a refund asked for again that a
 * notification or another caller settled, or Stripe named, meanwhile is not sent.
 */
export async function askProviderRefund(db: Db, stripe: Stripe, asked: ProviderRefundRequest): Promise<void> {
  const refund = await db.orderRefund.findUniqueOrThrow({ where: { id: asked.refundId } });
  if (refund.status !== 'pending' || refund.providerRefundId !== null) return;
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
    if (!madeNothing(error)) {
      // No answer, Stripe's own failure, its refusal of our key or rate, or the key in use: an
      // earlier try may have made the refund. It stays pending (its value held) until Stripe's
      // record of it is found by its order_refund_id.
      throw new AppError(
        'refund_in_progress',
        {
          refund_id: refund.id,
          message: 'the payment provider did not answer; the refund stays pending until it reports the outcome',
        },
        { cause: error },
      );
    }
    // Refused (Stripe refunded nothing): failed, its value refundable again.
    await db.$transaction((tx) => completeOrderRefund(tx, refund.id, { status: 'failed', providerRefundId: null }));
    throw providerRefusal(error, { refund_id: refund.id });
  }
  await recordProviderRefund(db, refund.id, providerRefund);
}

/**
 * A pending refund settled from Stripe's record of it (settleFromProvider), or, when Stripe shows
 * none, asked for again under the same key (askProviderRefund): for a retry of the request, an
 * operator's deliberate call. The settle-stuck-order-refunds job asks again only while Stripe
 * still applies the key.
 */
export async function settleOrAskAgain(
  db: Db,
  stripe: Stripe,
  asked: ProviderRefundRequest & { providerRefundId: string | null },
): Promise<void> {
  if (!(await settleFromProvider(db, stripe, asked))) await askProviderRefund(db, stripe, asked);
}

/**
 * A pending refund settled from Stripe's record of it, as booking refunds are reconciled: Stripe
 * lists the payment's refunds, and ours (its provider id when Stripe named it, else its
 * metadata.order_refund_id) is recorded. False when none is ours and Stripe never named one: the
 * request never arrived. Sent again under the same key while Stripe keeps it (a day), it is
 * still made once; sent later it would be a new refund. A refund Stripe did name is never asked
 * for again: one it does not list stays pending (409 refund_in_progress).
 */
export async function settleFromProvider(
  db: Db,
  stripe: Stripe,
  asked: ProviderRefundRequest & { providerRefundId: string | null },
): Promise<boolean> {
  const ours = await findProviderRefund(stripe, asked.paymentIntentId, {
    id: asked.refundId,
    providerRefundId: asked.providerRefundId,
    metadataKey: 'order_refund_id',
  });
  if (ours) {
    await recordProviderRefund(db, asked.refundId, ours);
    return true;
  }
  if (asked.providerRefundId) {
    throw new AppError('refund_in_progress', {
      refund_id: asked.refundId,
      message: 'the payment provider does not list the refund it reported; the refund stays pending',
    });
  }
  return false;
}

/** Records Stripe's refund for ours: settled when final (providerOutcome), else its id, for the notifications. */
async function recordProviderRefund(db: Db, refundId: string, providerRefund: Stripe.Refund): Promise<void> {
  const outcome = providerOutcome(providerRefund);
  await db.$transaction(async (tx) => {
    if (outcome.status !== 'pending') {
      return completeOrderRefund(tx, refundId, { status: outcome.status, providerRefundId: providerRefund.id });
    }
    await tx.orderRefund.updateMany({
      where: { id: refundId, providerRefundId: null },
      data: { providerRefundId: providerRefund.id },
    });
  });
}
