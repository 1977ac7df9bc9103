import type { TraceContext } from '@booking/tracing';
import type pg from 'pg';
import { groupCalls } from './group-calls';

/** A delivery with what its attempt needs of its event and endpoint, read in one statement. */
export interface DeliveryToSend {
  id: string;
  eventName: string;
  status: string;
  isTest: boolean;
  testData: unknown;
  createdAt: Date;
  /** The delivery's version: a write after this run's read that must not cross another's checks it. */
  updatedAt: Date;
  event: { data: unknown; sealedData: string | null; createdAt: Date; trace: TraceContext | null } | null;
  /** The contact fields of the event's customer as they are now (customer events only). */
  customer: { email: string; firstName: string; lastName: string | null; phone: string | null } | null;
  endpoint: {
    id: string;
    url: string;
    status: string;
    deletedAt: Date | null;
    secretCiphertext: string;
    previousSecretCiphertext: string | null;
    previousSecretExpiresAt: Date | null;
  };
}

interface Row {
  id: string;
  event_name: string;
  status: string;
  is_test: boolean;
  test_data: unknown;
  created_at: Date;
  updated_at: Date;
  event_id: string | null;
  event_data: unknown;
  sealed_data: string | null;
  event_created_at: Date | null;
  traceparent: string | null;
  tracestate: string | null;
  customer_email: string | null;
  customer_first_name: string | null;
  customer_last_name: string | null;
  customer_phone: string | null;
  endpoint_id: string;
  url: string;
  endpoint_status: string;
  deleted_at: Date | null;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: Date | null;
}

const READ_DELIVERIES: pg.QueryConfig<[string[]]> = {
  name: 'dispatcher-read-deliveries',
  text: `
    SELECT d.id, d.event_name, d.status::text AS status, d.is_test, d.test_data, d.created_at, d.updated_at,
           e.id AS event_id, e.data AS event_data, e.sealed_data,
           e.created_at AS event_created_at, e.traceparent, e.tracestate,
           c.email AS customer_email, c.first_name AS customer_first_name, c.last_name AS customer_last_name,
           c.phone AS customer_phone,
           p.id AS endpoint_id, p.url, p.status::text AS endpoint_status, p.deleted_at, p.secret_ciphertext,
           p.previous_secret_ciphertext, p.previous_secret_expires_at
    FROM webhook_deliveries d
    JOIN webhook_endpoints p ON p.id = d.endpoint_id
    LEFT JOIN events e ON e.id = d.event_id
    LEFT JOIN customers c ON e.entity_type = 'customer' AND c.id = e.entity_id AND c.tenant_id = d.tenant_id
    WHERE d.id = ANY($1::uuid[])`,
};

export interface DeliveryReader {
  /** The delivery, its event (with its customer) and its endpoint, or null when the delivery is gone. */
  read(deliveryId: string): Promise<DeliveryToSend | null>;
  close(): Promise<void>;
}

/**
 * Reads deliveries for the workers, the reads of concurrent jobs grouped into one statement (at
 * most 100 ids, gathered while another read runs, for at most 5 ms): fewer statements for
 * PostgreSQL and fewer waits for a pooled connection than one read per job.
 */
export function createDeliveryReader(pool: pg.Pool): DeliveryReader {
  const grouped = groupCalls<string, DeliveryToSend | null>(
    async (ids) => {
      const { rows } = await pool.query<Row, [string[]]>({ ...READ_DELIVERIES, values: [ids] });
      const byId = new Map(rows.map((row) => [row.id, toDelivery(row)]));
      return ids.map((id) => byId.get(id) ?? null);
    },
    { maxGroup: 100, maxWaitMs: 5 },
  );
  return { read: (id) => grouped.call(id), close: () => grouped.close() };
}

function toDelivery(row: Row): DeliveryToSend {
  return {
    id: row.id,
    eventName: row.event_name,
    status: row.status,
    isTest: row.is_test,
    testData: row.test_data,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    event:
      row.event_id === null
        ? null
        : {
            data: row.event_data,
            sealedData: row.sealed_data,
            createdAt: row.event_created_at!,
            trace: row.traceparent === null ? null : { traceparent: row.traceparent, tracestate: row.tracestate },
          },
    customer:
      row.customer_email === null
        ? null
        : {
            email: row.customer_email,
            firstName: row.customer_first_name!,
            lastName: row.customer_last_name,
            phone: row.customer_phone,
          },
    endpoint: {
      id: row.endpoint_id,
      url: row.url,
      status: row.endpoint_status,
      deletedAt: row.deleted_at,
      secretCiphertext: row.secret_ciphertext,
      previousSecretCiphertext: row.previous_secret_ciphertext,
      previousSecretExpiresAt: row.previous_secret_expires_at,
    },
  };
}
