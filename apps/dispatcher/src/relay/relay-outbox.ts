import type { Db } from '@booking/db';
import { endpointWants } from '@booking/events';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';
import { randomUUID } from 'node:crypto';

const BATCH = 200;

/**
 * Moves one batch of events from the outbox into deliveries, one per endpoint that wants the
 * event, and queues them. Rows are claimed with SKIP LOCKED, so several dispatcher processes
 * relay side by side without taking the same event. Deliveries and the event's relayed_at commit
 * together; queuing happens after, and a crash in between is repaired by the sweeper, which
 * queues pending deliveries that have no job. Returns how many events it relayed.
 */
export async function relayOutbox(db: Db, queue: DeliveryQueue, retryDelaysMs: number[]): Promise<number> {
  const { relayed, pending } = await db.$transaction(async (tx) => {
    const events = await tx.$queryRaw<{ id: string; tenant_id: string; name: string }[]>`
      SELECT id, tenant_id, name FROM events WHERE relayed_at IS NULL
      ORDER BY created_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`;
    if (events.length === 0) return { relayed: 0, pending: [] as string[] };

    const endpoints = await tx.webhookEndpoint.findMany({
      where: { tenantId: { in: [...new Set(events.map((e) => e.tenant_id))] }, deletedAt: null },
      select: { id: true, tenantId: true, events: true, status: true },
    });
    const deliveries = events.flatMap((event) =>
      endpoints
        .filter((endpoint) => endpoint.tenantId === event.tenant_id && endpointWants(endpoint.events, event.name))
        .map((endpoint) => ({
          id: randomUUID(),
          tenantId: event.tenant_id,
          endpointId: endpoint.id,
          eventId: event.id,
          eventName: event.name,
          // A disabled endpoint's deliveries wait for it to be resumed.
          status: endpoint.status === 'disabled' ? ('waiting' as const) : ('pending' as const),
        })),
    );
    await tx.webhookDelivery.createMany({ data: deliveries, skipDuplicates: true });
    await tx.event.updateMany({ where: { id: { in: events.map((e) => e.id) } }, data: { relayedAt: new Date() } });
    return { relayed: events.length, pending: deliveries.filter((d) => d.status === 'pending').map((d) => d.id) };
  });
  await enqueueDeliveries(
    queue,
    pending.map((id) => ({ id })),
    retryDelaysMs,
  );
  return relayed;
}
