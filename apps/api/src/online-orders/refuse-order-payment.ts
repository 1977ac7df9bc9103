import type { Tx } from '@booking/db';
import type { LockedOrder } from '../locks';
import { recordOrderCancelled } from './order-cancelled';

/**
 * Marks a payment an online order cannot keep for review, in the caller's transaction with the
 * order locked; the caller gives it back after the commit. The reason: paid_after_<status> when
 * the order was no longer waiting for it, payment_mismatch when it does not match the order,
 * else `refusal` (what the order was to buy can no longer be had). An order still waiting for
 * its payment ends here (order.cancelled). Returns whether it did.
 */
export async function refuseOrderPayment(
  tx: Tx,
  order: LockedOrder,
  payment: { intentId: string; paidCents: number; matches: boolean; refusal: string; at: Date },
): Promise<boolean> {
  const waiting = order.status === 'pending_payment';
  await tx.order.update({
    where: { id: order.id },
    data: {
      paymentIntentId: payment.intentId,
      paidCents: payment.paidCents,
      reviewReason: !waiting ? `paid_after_${order.status}` : payment.matches ? payment.refusal : 'payment_mismatch',
      ...(waiting && { status: 'cancelled', cancelledAt: payment.at }),
    },
  });
  if (waiting) await recordOrderCancelled(tx, order);
  return waiting;
}
