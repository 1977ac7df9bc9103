import type { Tx } from '@booking/db';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder } from '../locks';
import { idOf } from '../payments/stripe-ids';
import { recordOrderRefund } from './record-order-refund';

/** A voided order's pending card refund, as order_refunds keeps it. */
interface VoidRefund {
  id: string;
  tenantId: string;
  orderId: string;
  tenderId: string | null;
  reason: string | null;
}

/**
 * A voided order's card refund settled by its own provider refund, for what that refund gave
 * back: Stripe refunds what it still holds of the payment, so money given back meanwhile on the
 * same payment (in its dashboard, a dispute: reconcile-order-refunds) is not counted twice. The
 * tender's refunded amount grows by it. Settles once, however the refund call's answer and the
 * notifications overlap (only a pending row moves).
 */
export async function settleVoid(tx: Tx, row: VoidRefund, providerRefund: Stripe.Refund): Promise<void> {
  await lockOrder(tx, ANY_TENANT, row.orderId);
  const tender = await tx.orderTender.findUniqueOrThrow({ where: { id: row.tenderId! } });
  const amount = Math.min(providerRefund.amount, tender.amountCents - tender.refundedCents);
  if (amount <= 0) return;
  const moved = await tx.orderRefund.updateMany({
    where: { id: row.id, status: 'pending' },
    data: { status: 'succeeded', amountCents: amount, providerRefundId: providerRefund.id },
  });
  if (moved.count === 0) return;
  await tx.orderTender.update({ where: { id: tender.id }, data: { refundedCents: { increment: amount } } });
  await recordOrderRefund(tx, {
    tenantId: row.tenantId,
    orderId: row.orderId,
    refundId: row.id,
    paymentIntentId: idOf(providerRefund.payment_intent)!,
    amountCents: amount,
    reason: row.reason,
  });
}
