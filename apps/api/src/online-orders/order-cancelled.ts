import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';

/**
 * order.cancelled for an online order that will never be paid: abandoned, or refused a payment
 * it cannot keep. Its data is the order as entity and nothing else.
 */
export function recordOrderCancelled(tx: Tx, order: { id: string; tenantId: string }): Promise<string> {
  return recordEvent(tx, {
    tenantId: order.tenantId,
    name: 'order.cancelled',
    entityType: 'order',
    entityId: order.id,
    fields: {},
  });
}
