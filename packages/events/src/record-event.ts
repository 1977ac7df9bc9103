import { randomUUID } from 'node:crypto';
import type { Prisma, Tx } from '@booking/db';
import { sealSecret } from '@booking/signing';
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

/**
 * Writes an event to the outbox inside the caller's transaction, so the event exists if and only
 * if the change it describes committed. The webhook dispatcher delivers it later. `fields` are
 * typed by the event's payload schema (payloads/): a producer can neither leave out a field the
 * catalogue lists nor add one it does not.
 */
export async function recordEvent<N extends RecordedEventName, F extends EventFields<N>>(
  tx: Tx,
  event: {
    tenantId: string;
    name: N;
    /** Fixed per event, or one of a few (EVENT_ENTITY). */
    entityType: EntityOf<N>;
    entityId: string;
    fields: Exactly<EventFields<N>, F>;
  } & SecretFields<N>,
): Promise<string> {
  assertRecordedFields(event.name, event.entityType, event.fields);
  const id = randomUUID();
  const schemaVersion = EVENT_SCHEMA_VERSIONS[event.name];
  await tx.event.create({
    data: {
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
    },
  });
  // Wakes the dispatcher's relay. PostgreSQL delivers the notification only if and when this
  // transaction commits; the relay also polls, so a lost notification only adds latency.
  await tx.$executeRaw`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`;
  return id;
}

/** The PostgreSQL notification channel the outbox relay listens on. */
export const OUTBOX_CHANNEL = 'outbox_events';

function sealedFields(event: { secretFields?: object; secretKey?: string }): string | null {
  return event.secretFields ? sealSecret(event.secretKey!, JSON.stringify(event.secretFields)) : null;
}
