import type { Tx } from '@booking/db';
import type { LockedOrder } from '../locks';
import { givenBackCents } from './dispute-takeover';

/**
 * review_reason of an online order whose late payment could not be given back: the provider's
 * refund failed, so the payer still has not got the money and a person has to settle it.
 */
export const LATE_REFUND_FAILED = 'late_payment_refund_failed';

/** Whether money given back for sure (succeeded refunds, disputes) covers what the payer paid. */
async function repaid(tx: Tx, order: LockedOrder): Promise<boolean> {
  return (await givenBackCents(tx, { orderId: order.id, tenderId: null })) >= order.paidCents;
}

/**
 * After the refund of a payment an online order could not keep failed: the order is flagged
 * (LATE_REFUND_FAILED), unless the payer got the money back another way meanwhile (a dispute,
 * whose chargeback is why Stripe fails a refund still pending). Returns whether it flagged it.
 * The caller holds the order lock.
 */
export async function flagUnlessRepaid(tx: Tx, order: LockedOrder): Promise<boolean> {
  if (await repaid(tx, order)) return false;
  await tx.order.update({ where: { id: order.id }, data: { reviewReason: LATE_REFUND_FAILED } });
  return true;
}

/**
 * After money went back on an order flagged LATE_REFUND_FAILED (a refund in Stripe's dashboard,
 * a dispute): once it covers what was paid nothing is left to settle, and review_reason goes back
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
