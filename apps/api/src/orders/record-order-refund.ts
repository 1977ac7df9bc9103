import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';

/** refund.created for money an order's payment gave back through Stripe (entity: the order). */
export function recordOrderRefund(
  tx: Tx,
  refund: {
    tenantId: string;
    orderId: string;
    refundId: string;
    paymentIntentId: string;
    amountCents: number;
    reason: string | null;
  },
): Promise<string> {
  return recordEvent(tx, {
    tenantId: refund.tenantId,
    name: 'refund.created',
    entityType: 'order',
    entityId: refund.orderId,
    fields: {
      refund_id: refund.refundId,
      payment_intent_id: refund.paymentIntentId,
      amount_cents: refund.amountCents,
      reason: refund.reason,
      status: 'succeeded',
    },
  });
}
