import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';

/** Deliveries moved back to pending, and queued, per statement and per queue call. */
const CHUNK = 1_000;

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

/**
 * Sends again an endpoint's deliveries in `status` (created since `since`, if given), on a fresh
 * schedule: `CHUNK` at a time, each chunk moved back to pending in one statement and then queued,
 * so a backlog of any size (an endpoint disabled over a weekend) stays within the statement and
 * Redis command timeouts. A chunk that committed but could not be queued is pending without a job,
 * which the dispatchers' sweep queues. Returns how many were sent again.
 */
export async function resendInChunks(
  deps: Deps,
  endpointId: string,
  selection: { status: 'waiting' | 'abandoned'; since?: Date },
): Promise<number> {
  const since = selection.since ?? new Date(0);
  let resent = 0;
  // Bounded: each round moves rows out of `status`, and no more rounds than the rows there were.
  const rounds = Math.ceil(
    (await deps.db.webhookDelivery.count({
      where: { endpointId, status: selection.status, createdAt: { gte: since } },
    })) / CHUNK,
  );
  for (let round = 0; round < rounds; round += 1) {
    const chunk = await deps.db.$queryRaw<{ id: string }[]>`
      UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = NULL, updated_at = now()
       WHERE id IN (SELECT id FROM webhook_deliveries
                     WHERE endpoint_id = ${endpointId}::uuid AND status = ${selection.status}::webhook_delivery_status
                       AND created_at >= ${since}
                     ORDER BY created_at LIMIT ${CHUNK} FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    await enqueueDeliveries(deps.deliveryQueue, chunk, deps.config.webhooks.retryDelaysMs);
    resent += chunk.length;
    if (chunk.length < CHUNK) break;
  }
  return resent;
}
