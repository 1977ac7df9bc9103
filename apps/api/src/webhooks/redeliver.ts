import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

/** Sends a delivery again, with the same id, on a fresh schedule. */
export async function redeliver(deps: Deps, tenantId: string, deliveryId: string) {
  const delivery = await deps.db.webhookDelivery.findFirst({
    where: { id: deliveryId, tenantId, endpoint: { deletedAt: null } },
    include: { endpoint: true },
  });
  if (!delivery) throw new AppError('webhook_delivery_not_found');
  if (delivery.endpoint.status === 'disabled') {
    throw new AppError('webhook_endpoint_disabled', 'resume the endpoint first; its waiting deliveries are sent then');
  }
  await deps.db.webhookDelivery.update({
    where: { id: deliveryId },
    data: { status: 'pending', attemptCount: 0, nextAttemptAt: null },
  });
  // A job waiting for a retry is replaced, so the delivery goes now on a fresh schedule; one
  // being sent right now is left alone (the id is the job id, so nothing is added then).
  const queued = await deps.deliveryQueue.getJob(deliveryId);
  if (queued && ((await queued.isDelayed()) || (await queued.isWaiting()))) await queued.remove();
  await enqueueDeliveries(deps.deliveryQueue, [{ id: deliveryId }], deps.config.webhooks.retryDelaysMs);
  return { delivery_id: deliveryId, status: 'pending' as const };
}
