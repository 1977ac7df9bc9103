import { randomUUID } from 'node:crypto';
import type { Prisma, Tx } from '@booking/db';
import { sealSecret } from '@booking/signing';
import { EVENT_SCHEMA_VERSIONS, type EventName } from './catalogue';

/**
 * Data fields that are bearer secrets. They are delivered like any other field, but the outbox
 * keeps them sealed with `secretKey` (WEBHOOK_SECRET_KEY): whoever reads the events table or a
 * backup of it reads no code that spends money.
 */
type SecretFields = { secretFields?: undefined } | { secretFields: Record<string, string>; secretKey: string };

/**
 * Writes an event to the outbox inside the caller's transaction, so the event exists if and only
 * if the change it describes committed. The webhook dispatcher delivers it later.
 */
export async function recordEvent(
  tx: Tx,
  event: {
    tenantId: string;
    name: EventName;
    /** The spec's subjects, plus `shift` for POS register events, which have none of them. */
    entityType: 'booking' | 'customer' | 'wallet' | 'membership' | 'order' | 'shift';
    entityId: string;
    fields: Record<string, Prisma.InputJsonValue | null>;
  } & SecretFields,
): Promise<string> {
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
      sealedData: event.secretFields ? sealSecret(event.secretKey, JSON.stringify(event.secretFields)) : null,
      data: {
        event_id: id,
        schema_version: schemaVersion,
        entity_type: event.entityType,
        entity_id: event.entityId,
        ...event.fields,
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
