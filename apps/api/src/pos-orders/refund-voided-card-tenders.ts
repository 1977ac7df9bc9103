import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder } from '../locks';
import { recordOrderRefund } from '../orders/record-order-refund';
import { isAlreadyRefunded } from '../payments/provider-call';

/**
 * Gives back the card payments of a voided order: each pending void refund is sent to the
 * provider, then recorded succeeded with refund.created. A card tender's payment is for exactly
 * its amount, so each refund is a full one: a retry after a crash is refused by the provider as
 * already refunded, and then finds the refund made the first time.
 *
 * Only a refund the provider reports succeeded settles the row. One still pending there keeps
 * the row pending (its notification settles it, or a later retry finds it done); one that failed
 * gave nothing back, so the row stays pending and the next retry asks again.
 */
export async function refundVoidedCardTenders(deps: { db: Db; stripe: Stripe }, orderId: string): Promise<void> {
  const pending = await deps.db.orderRefund.findMany({
    where: { orderId, source: 'void', status: 'pending' },
    include: { tender: true },
  });
  for (const refund of pending) {
    const paymentIntentId = refund.tender!.paymentReference!;
    const providerRefund = await fullRefund(deps.stripe, paymentIntentId, {
      tenant_id: refund.tenantId,
      order_id: orderId,
      order_refund_id: refund.id,
    });
    if (providerRefund.status !== 'succeeded') continue;
    await deps.db.$transaction(async (tx) => {
      const order = (await lockOrder(tx, ANY_TENANT, orderId))!;
      const moved = await tx.orderRefund.updateMany({
        where: { id: refund.id, status: 'pending' },
        data: { status: 'succeeded', providerRefundId: providerRefund.id },
      });
      if (moved.count === 0) return;
      await tx.orderTender.update({ where: { id: refund.tenderId! }, data: { refundedCents: refund.amountCents } });
      await recordOrderRefund(tx, {
        tenantId: order.tenantId,
        orderId,
        refundId: refund.id,
        paymentIntentId,
        amountCents: refund.amountCents,
        reason: refund.reason,
      });
    });
  }
}

async function fullRefund(
  stripe: Stripe,
  paymentIntentId: string,
  metadata: Record<string, string>,
): Promise<Stripe.Refund> {
  try {
    return await stripe.refunds.create({ payment_intent: paymentIntentId, metadata });
  } catch (error) {
    if (!isAlreadyRefunded(error)) throw error;
    // Refunded in full already: by an earlier try of ours, or in the provider's dashboard. Either
    // way the money is back, and that refund settles the void's. A failed refund gave nothing
    // back: only one that succeeded, or is pending and may still succeed, counts.
    const refunds = await stripe.refunds.list({ payment_intent: paymentIntentId, limit: 10 });
    const live = refunds.data.filter((refund) => refund.status === 'succeeded' || refund.status === 'pending');
    const done = live.find((refund) => refund.metadata?.order_refund_id === metadata.order_refund_id) ?? live[0];
    if (!done) throw error;
    return done;
  }
}
