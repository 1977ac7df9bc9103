import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { findEndpoint } from './find-endpoint';

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
