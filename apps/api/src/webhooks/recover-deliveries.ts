import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';
import { findEndpoint } from './find-endpoint';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

/** Resends every abandoned delivery of an endpoint created since a time (as Svix's recover). */
export async function recoverDeliveries(deps: Deps, tenantId: string, endpointId: string, since: string) {
  const endpoint = await findEndpoint(deps.db, tenantId, endpointId);
  if (endpoint.status === 'disabled') {
    throw new AppError('webhook_endpoint_disabled', 'resume the endpoint first; its waiting deliveries are sent then');
  }
  const failed = await deps.db.webhookDelivery.findMany({
    where: { endpointId, status: 'abandoned', createdAt: { gte: new Date(since) } },
    select: { id: true },
  });
  await deps.db.webhookDelivery.updateMany({
    where: { id: { in: failed.map((d) => d.id) } },
    data: { status: 'pending', attemptCount: 0, nextAttemptAt: null },
  });
  await enqueueDeliveries(deps.deliveryQueue, failed, deps.config.webhooks.retryDelaysMs);
  return { recovered: failed.length };
}
