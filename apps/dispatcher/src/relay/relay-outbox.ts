import { SUBSCRIBABLE_EVENTS } from '@booking/events';
import { startSpan, tracingActive, type TraceContext } from '@booking/tracing';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';
import type pg from 'pg';

/** Events claimed per statement, at most (see the relay's batch size). */
export const RELAY_BATCH_SIZE = 1000;

// One statement: claim a batch of events, mark them relayed and write one delivery per endpoint
// that wants each (`endpointWants` of @booking/events: a subscribable event, and the endpoint
// listens to all events or names it). A disabled endpoint's deliveries wait for its resume.
// Traced, it also returns the events' trace contexts, which the relay span links to.
// The order names both columns of the (relayed_at, created_at) index, as IS NULL is no equality
// to the planner: by created_at alone it sorted the whole backlog each batch (59 ms at 200,000
// waiting events, against 0.5 ms reading the index in order). The index also keeps an entry for
// every event relayed since the table was last vacuumed, ahead of the waiting ones, so the scan
// starts at the drain's bound, `created_at >= $3`, an index condition (see outbox-relay).
export const relayBatch = (traced: boolean): pg.QueryConfig => ({
  name: traced ? 'dispatcher-relay-batch-traced' : 'dispatcher-relay-batch',
  text: `
    WITH claimed AS (
      SELECT id, tenant_id, name${traced ? ', traceparent, tracestate' : ''} FROM events
      WHERE relayed_at IS NULL AND created_at >= $3::timestamptz
      ORDER BY relayed_at, created_at LIMIT $1 FOR UPDATE SKIP LOCKED
    ),
    relayed AS (
      UPDATE events e SET relayed_at = now() FROM claimed c WHERE e.id = c.id RETURNING e.id
    ),
    deliveries AS (
      INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_name, status, created_at, updated_at)
      SELECT gen_random_uuid(), c.tenant_id, p.id, c.id, c.name,
             (CASE WHEN p.status = 'disabled' THEN 'waiting' ELSE 'pending' END)::webhook_delivery_status, now(), now()
      FROM claimed c
      JOIN webhook_endpoints p ON p.tenant_id = c.tenant_id AND p.deleted_at IS NULL
      WHERE c.name = ANY($2::text[]) AND (cardinality(p.events) = 0 OR c.name = ANY(p.events))
      ON CONFLICT (endpoint_id, event_id) DO NOTHING
      RETURNING id, status
    )
    SELECT (SELECT count(*) FROM relayed)::int AS relayed, statement_timestamp() AS started_at,
           coalesce((SELECT array_agg(id::text) FROM deliveries WHERE status = 'pending'), '{}') AS pending${
             traced
               ? `,
           coalesce((SELECT json_agg(json_build_object('traceparent', traceparent, 'tracestate', tracestate))
                       FROM claimed WHERE traceparent IS NOT NULL), '[]') AS traces`
               : ''
           }`,
});
const RELAY_BATCH = relayBatch(false);
const RELAY_BATCH_TRACED = relayBatch(true);

/**
 * Moves one batch of events from the outbox into deliveries and queues them. Rows are claimed
 * with SKIP LOCKED, so several dispatcher processes relay side by side without taking the same
 * event. Deliveries and the event's relayed_at commit together (one statement); queuing happens
 * after, and a crash in between is repaired by the sweeper, which queues pending deliveries that
 * have no job. Only events created at `createdFrom` or later are claimed (null: every waiting
 * event). Returns how many events it relayed, when its statement started by PostgreSQL's clock,
 * and the queuing, which the caller awaits while it relays the next batch.
 */
export async function relayOutbox(
  pool: pg.Pool,
  queue: DeliveryQueue,
  retryDelaysMs: number[],
  batchSize: number,
  createdFrom: Date | null,
): Promise<{ relayed: number; startedAt: Date; queued: Promise<void> }> {
  const traced = tracingActive();
  const startTime = traced ? Date.now() : 0;
  const { rows } = await pool.query<{
    relayed: number;
    started_at: Date;
    pending: string[];
    traces?: TraceContext[];
  }>({
    ...(traced ? RELAY_BATCH_TRACED : RELAY_BATCH),
    values: [batchSize, SUBSCRIBABLE_EVENTS, createdFrom ?? '-infinity'],
  });
  const { relayed, started_at: startedAt, pending, traces } = rows[0]!;
  const enqueue = () =>
    enqueueDeliveries(
      queue,
      pending.map((id) => ({ id })),
      retryDelaysMs,
    );
  // Polls that find nothing leave no span. A batch's span starts when its statement did and
  // ends once its jobs are queued; it links to the traces of the events it relayed.
  if (!traced || relayed === 0) return { relayed, startedAt, queued: enqueue() };
  const span = startSpan('outbox relay', {
    kind: 'producer',
    startTime,
    links: traces,
    attributes: { 'outbox.events_relayed': relayed, 'outbox.deliveries_queued': pending.length },
  });
  const queued = span.run(enqueue);
  queued.then(
    () => span.end(),
    (error: unknown) => span.end(error),
  );
  return { relayed, startedAt, queued };
}
