import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';
import { findEndpoint } from './manage-endpoints';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

const ENTITY_TYPES = ['booking', 'customer', 'wallet', 'membership', 'order'];

/**
 * The deliveries of an endpoint, newest first, each with its attempts. Pages are keyed on
 * (created_at, id): the relay creates a batch's deliveries in one statement, so many share a
 * created_at and a time alone would skip some.
 */
export async function listDeliveries(
  db: Db,
  tenantId: string,
  endpointId: string,
  page: { limit: number; startingAfter?: string },
) {
  await findEndpoint(db, tenantId, endpointId);
  const after = page.startingAfter
    ? await db.webhookDelivery.findFirst({
        where: { id: page.startingAfter, endpointId },
        select: { id: true, createdAt: true },
      })
    : null;
  if (page.startingAfter && !after) throw new AppError('webhook_delivery_not_found');
  const deliveries = await db.webhookDelivery.findMany({
    where: {
      endpointId,
      ...(after && {
        OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
      }),
    },
    include: { attempts: { orderBy: { attemptNumber: 'asc' } } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: page.limit,
  });
  return {
    data: deliveries.map((d) => ({
      id: d.id,
      event: d.eventName,
      event_id: d.eventId,
      status: d.status,
      is_test: d.isTest,
      attempt_count: d.attemptCount,
      next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
      created_at: d.createdAt.toISOString(),
      attempts: d.attempts.map((a) => ({
        attempt_number: a.attemptNumber,
        started_at: a.startedAt.toISOString(),
        status_code: a.statusCode,
        duration_ms: a.durationMs,
        succeeded: a.succeeded,
        error: a.error,
        response_body: a.responseBody,
      })),
    })),
    next_starting_after: deliveries.length === page.limit ? deliveries[deliveries.length - 1]!.id : null,
  };
}

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
