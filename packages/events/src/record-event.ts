import { randomUUID } from 'node:crypto';
import type { Prisma, Tx } from '@booking/db';
import { sealSecret } from '@booking/signing';
import { currentTraceContext } from '@booking/tracing';
import { EVENT_SCHEMA_VERSIONS } from './catalogue';
import { assertRecordedFields } from './payloads/check-fields';
import type { EntityOf, EventFields, EventSecretFields, RecordedEventName } from './payloads';

/** `F` with no property beyond those of `T`: an extra field is a compile error, even from a spread. */
type Exactly<T, F> = F & Record<Exclude<keyof F, keyof T>, never>;

/**
 * Data fields that are bearer secrets. They are delivered like any other field, but the outbox
 * keeps them sealed with `secretKey` (WEBHOOK_SECRET_KEY): whoever reads the events table or a
 * backup of it reads no code that spends money. Required exactly for the events that have them.
 */
type SecretFields<N extends RecordedEventName> = [EventSecretFields<N>] extends [never]
  ? { secretFields?: undefined }
  : { secretFields: EventSecretFields<N>; secretKey: string };

/** An event as a producer states it: `fields` typed by the event's payload schema (payloads/). */
export type EventInput<N extends RecordedEventName, F extends EventFields<N>> = {
  tenantId: string;
  name: N;
  /** Fixed per event, or one of a few (EVENT_ENTITY). */
  entityType: EntityOf<N>;
  entityId: string;
  fields: Exactly<EventFields<N>, F>;
} & SecretFields<N>;

/** An outbox row, exactly as it is written to the events table. */
export interface EventRow {
  id: string;
  tenantId: string;
  name: string;
  entityType: string;
  entityId: string;
  schemaVersion: number;
  sealedData: string | null;
  data: Record<string, Prisma.InputJsonValue | null>;
  /** W3C trace context of the request or job recording the event; null when tracing is off. */
  traceparent: string | null;
  tracestate: string | null;
}

/**
 * The one home of an outbox row's shape: its id, schema version, sealed fields, `data` and the
 * trace context its deliveries continue (docs/tracing.md). recordEvent writes it through Prisma;
 * a hot path that writes its event inside a raw SQL statement writes this same row.
 */
export function eventRow<N extends RecordedEventName, F extends EventFields<N>>(event: EventInput<N, F>): EventRow {
  assertRecordedFields(event.name, event.entityType, event.fields);
  const id = randomUUID();
  const schemaVersion = EVENT_SCHEMA_VERSIONS[event.name];
  const trace = currentTraceContext();
  return {
    id,
    tenantId: event.tenantId,
    name: event.name,
    entityType: event.entityType,
    entityId: event.entityId,
    schemaVersion,
    sealedData: sealedFields(event),
    data: {
      event_id: id,
      schema_version: schemaVersion,
      entity_type: event.entityType,
      entity_id: event.entityId,
      ...(event.fields as Record<string, Prisma.InputJsonValue | null>),
    },
    traceparent: trace?.traceparent ?? null,
    tracestate: trace?.tracestate ?? null,
  };
}

/**
 * Writes an event to the outbox inside the caller's transaction, so the event exists if and only
 * if the change it describes committed. The webhook dispatcher's relay finds it at its next poll
 * and delivers it. `fields` are typed by the event's payload schema (payloads/): a producer can
 * neither leave out a field the catalogue lists nor add one it does not.
 *
 * No NOTIFY wakes the relay: PostgreSQL serialises the commits of all transactions that notify,
 * across the cluster (a lock held through the commit's WAL flush), which capped event-writing
 * commits, bookings included, at a fraction of what group commit allows.
 */
export async function recordEvent<N extends RecordedEventName, F extends EventFields<N>>(
  tx: Tx,
  event: EventInput<N, F>,
): Promise<string> {
  const row = eventRow(event);
  await tx.event.create({ data: row });
  return row.id;
}

function sealedFields(event: { secretFields?: object; secretKey?: string }): string | null {
  return event.secretFields ? sealSecret(event.secretKey!, JSON.stringify(event.secretFields)) : null;
}
