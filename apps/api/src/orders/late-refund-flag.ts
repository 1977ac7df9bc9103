import type { Tx } from '@booking/db';
import type { LockedOrder } from '../locks';

/**
 * review_reason of an online order whose late payment could not be given back: the provider's
 * refund failed (or was not asked for: see refundLatePayment), so the payer still has not got
 * the money and a person has to settle it.
 */
export const LATE_REFUND_FAILED = 'late_payment_refund_failed';

/**
 * Whether refunds that succeeded (ours, or made in Stripe's dashboard) cover what the payer paid.
 * A dispute does not count: the merchant may still win it (charge.dispute.closed, won, which
 * nothing handles yet), and the payer would then be owed again with nobody told.
 */
async function repaid(tx: Tx, order: LockedOrder): Promise<boolean> {
  const back = await tx.orderRefund.aggregate({
    where: { orderId: order.id, tenderId: null, status: 'succeeded', source: { not: 'dispute' } },
    _sum: { amountCents: true },
  });
  return (back._sum.amountCents ?? 0) >= order.paidCents;
}

/**
 * After the refund of a payment an online order could not keep failed, or could not be asked
 * for: the order is flagged (LATE_REFUND_FAILED), unless refunds repaid the payer meanwhile. A
 * dispute's chargeback is why Stripe fails a refund still pending, but it flags all the same (see
 * repaid). Returns whether it flagged it. The caller holds the order lock.
 */
export async function flagUnlessRepaid(tx: Tx, order: LockedOrder): Promise<boolean> {
  if (await repaid(tx, order)) return false;
  await tx.order.update({ where: { id: order.id }, data: { reviewReason: LATE_REFUND_FAILED } });
  return true;
}

/**
 * After money went back on an order flagged LATE_REFUND_FAILED (a refund in Stripe's dashboard):
 * once it covers what was paid nothing is left to settle, and review_reason goes back
 * to why the payment was not kept (its refund row keeps it). The caller holds the order lock.
 */
export async function clearIfRepaid(tx: Tx, order: LockedOrder): Promise<void> {
  if (order.reviewReason !== LATE_REFUND_FAILED || !(await repaid(tx, order))) return;
  const late = await tx.orderRefund.findFirst({
    where: { orderId: order.id, source: 'late_payment' },
    select: { reason: true },
  });
  await tx.order.update({ where: { id: order.id }, data: { reviewReason: late?.reason ?? null } });
}
