import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';
import { endpointView } from './endpoint-view';
import { findEndpoint } from './find-endpoint';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

/** Re-enables an endpoint and sends what waited while it was disabled, on a fresh schedule. */
export async function resumeEndpoint(deps: Deps, tenantId: string, id: string) {
  await findEndpoint(deps.db, tenantId, id);
  const { endpoint, waiting } = await deps.db.$transaction(async (tx) => {
    const endpoint = await tx.webhookEndpoint.update({
      where: { id },
      data: { status: 'active', consecutiveFailures: 0, disabledAt: null },
    });
    const waiting = await tx.webhookDelivery.findMany({
      where: { endpointId: id, status: 'waiting' },
      select: { id: true },
    });
    await tx.webhookDelivery.updateMany({
      where: { endpointId: id, status: 'waiting' },
      data: { status: 'pending', attemptCount: 0 },
    });
    return { endpoint, waiting };
  });
  await enqueueDeliveries(deps.deliveryQueue, waiting, deps.config.webhooks.retryDelaysMs);
  return { ...endpointView(endpoint), resumed_deliveries: waiting.length };
}
