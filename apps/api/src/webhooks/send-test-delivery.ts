import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';
import { findEndpoint } from './find-endpoint';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

const ENTITY_TYPES = ['booking', 'customer', 'wallet', 'membership', 'order'];

/** A delivery with `_test: true` and sample data, to check a receiver from the developer settings. */
export async function sendTestDelivery(
  deps: Deps,
  tenantId: string,
  endpointId: string,
  eventName = 'booking.confirmed',
) {
  await findEndpoint(deps.db, tenantId, endpointId);
  const prefix = eventName.split('.')[0]!;
  const entityType = ENTITY_TYPES.includes(prefix) ? prefix : 'booking';
  const delivery = await deps.db.webhookDelivery.create({
    data: {
      tenantId,
      endpointId,
      eventName,
      isTest: true,
      testData: { event_id: randomUUID(), schema_version: 2, entity_type: entityType, entity_id: randomUUID() },
    },
  });
  await enqueueDeliveries(deps.deliveryQueue, [{ id: delivery.id }], deps.config.webhooks.retryDelaysMs);
  return { delivery_id: delivery.id };
}
