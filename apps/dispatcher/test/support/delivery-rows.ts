import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';

/**
 * Rows for the dispatcher's statement-level tests, on the test database (migrated by Jest's
 * global set-up): a tenant and an endpoint of the test file's own, which nothing calls (no HTTP
 * is sent), and deliveries to it.
 */
export interface DeliveryRows {
  pool: pg.Pool;
  tenantId: string;
  endpointId: string;
  /** `count` new deliveries to the endpoint, in `status`; their ids. */
  deliveries(count: number, status?: string): Promise<string[]>;
}

export async function seedDeliveryRows(name: string): Promise<DeliveryRows> {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const tenantId = randomUUID();
  const endpointId = randomUUID();
  await pool.query(`INSERT INTO tenants (id, slug, name) VALUES ($1, $2, $3)`, [
    tenantId,
    `${name.toLowerCase().replaceAll(' ', '-')}-${randomBytes(4).toString('hex')}`,
    name,
  ]);
  await pool.query(
    `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret_ciphertext, updated_at)
     VALUES ($1, $2, 'http://127.0.0.1:9/never-called', '{}', 'unused', now())`,
    [endpointId, tenantId],
  );
  return {
    pool,
    tenantId,
    endpointId,
    async deliveries(count, status = 'pending') {
      const ids = Array.from({ length: count }, () => randomUUID());
      await pool.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_name, is_test, status, updated_at)
         SELECT id, $2, $3, 'booking.created', true, $4::webhook_delivery_status, now() FROM unnest($1::uuid[]) AS id`,
        [ids, tenantId, endpointId, status],
      );
      return ids;
    },
  };
}
