import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { settleVoid } from '../orders/settle-void';
import { refundInFull } from '../payments/refund-in-full';

/**
 * Gives back the card payments of a voided order: each pending void refund is sent to the
 * provider and, once the provider reports it succeeded, settled with refund.created for what it
 * gave back (settleVoid). A card tender's payment is for exactly its amount, so each refund is of
 * all the provider still holds: a retry after a crash is refused as already refunded, and then
 * finds the refund made the first time.
 *
 * One still pending at the provider keeps the row pending (its notification settles it, or a
 * later retry finds it done); one that failed gave nothing back, so the row stays pending and the
 * next retry asks again. Money given back on the payment another way (in the dashboard, by a
 * dispute) is recorded by the refund notifications, which shrink the void's row by it.
 */
export async function refundVoidedCardTenders(deps: { db: Db; stripe: Stripe }, orderId: string): Promise<void> {
  const pending = await deps.db.orderRefund.findMany({
    where: { orderId, source: 'void', status: 'pending' },
    include: { tender: true },
  });
  for (const refund of pending) {
    const providerRefund = await refundInFull(
      deps.stripe,
      refund.tender!.paymentReference!,
      { tenant_id: refund.tenantId, order_id: orderId, order_refund_id: refund.id },
      (made) => made.metadata?.order_refund_id === refund.id,
    );
    if (providerRefund?.status !== 'succeeded') continue;
    await deps.db.$transaction((tx) => settleVoid(tx, refund, providerRefund));
  }
}
