import type { Db } from '@booking/db';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';

const BATCH = 500;

/**
 * Queues pending deliveries whose job is gone: the relay or the API died between committing a
 * delivery and queuing it, or Redis lost its data; and sends at once an overdue one whose job is
 * still delayed (a redeliver whose new job Redis refused). Also sends deliveries left waiting on
 * an endpoint that is active again. The delivery keeps its id, so the receiver
 * can tell a repeat from a new event; the schedule resumes where the delivery's attempts left it.
 */
export async function sweepUnqueued(
  db: Db,
  queue: DeliveryQueue,
  retryDelaysMs: number[],
  /** Longer than any gap between a delivery row's commit and its job being queued. */
  graceMs: number,
): Promise<number> {
  const before = new Date(Date.now() - graceMs);
  // A delivery written as `waiting` by a relay or worker that read its endpoint just before a
  // resume would otherwise wait for good: resume only picks up what is waiting when it runs. A
  // bounded number per sweep, queued at once: a resume still working through a backlog skips
  // these rows (SKIP LOCKED) and goes on with the rest.
  const woken = await db.$queryRaw<{ id: string }[]>`
    UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = NULL, updated_at = now()
     WHERE id IN (SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
                   WHERE d.status = 'waiting' AND e.status = 'active' AND e.deleted_at IS NULL AND d.updated_at < ${before}
                   ORDER BY d.created_at LIMIT ${BATCH} FOR UPDATE OF d SKIP LOCKED)
    RETURNING id`;
  await enqueueDeliveries(queue, woken, retryDelaysMs);
  const overdue = (id?: string) => ({
    ...(id !== undefined && { id }),
    status: 'pending' as const,
    OR: [{ nextAttemptAt: { lt: before } }, { nextAttemptAt: null, createdAt: { lt: before } }],
  });
  const stale = await db.webhookDelivery.findMany({
    where: overdue(),
    select: { id: true, attemptCount: true },
    orderBy: { createdAt: 'asc' },
    take: BATCH,
  });
  const missing: { id: string; firstAttempt: number; delayMs: number }[] = [];
  for (const delivery of stale) {
    const job = await queue.getJob(delivery.id);
    if (!job) {
      missing.push({
        id: delivery.id,
        firstAttempt: Math.min(delivery.attemptCount, retryDelaysMs.length - 1),
        delayMs: 0,
      });
    } else if (
      job.attemptsMade === 0 &&
      (await job.isDelayed()) &&
      (await db.webhookDelivery.count({ where: overdue(delivery.id) }))
    ) {
      // Overdue in PostgreSQL, yet its job waits on an older delay: a redeliver that reset the
      // delivery but could not replace its job (Redis refused). It goes now, as the redeliver said.
      // Not a job backing off after a run that threw (attemptsMade), nor one whose failed attempt
      // has just scheduled its retry (read again: no longer overdue). A job that stopped being
      // delayed meanwhile cannot be promoted, and needs nothing.
      await job.promote().catch(() => undefined);
    }
  }
  await enqueueDeliveries(queue, missing, retryDelaysMs);
  return woken.length + missing.length;
}
