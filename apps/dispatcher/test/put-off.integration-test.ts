import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { createAttemptRecorder } from '../src/worker/attempt-recorder';
import { createPutOffWriter } from '../src/worker/put-off';

// The put-off writer on the test database (migrated by Jest's global set-up), with a tenant, an
// endpoint and deliveries of this file's own; nothing here sends any HTTP.
let pool: pg.Pool;
let tenantId: string;
let endpointId: string;

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  tenantId = randomUUID();
  endpointId = randomUUID();
  await pool.query(`INSERT INTO tenants (id, slug, name) VALUES ($1, $2, 'Put-off tests')`, [
    tenantId,
    `put-off-${randomBytes(4).toString('hex')}`,
  ]);
  await pool.query(
    `INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret_ciphertext, updated_at)
     VALUES ($1, $2, 'http://127.0.0.1:9/never-called', '{}', 'unused', now())`,
    [endpointId, tenantId],
  );
});

afterAll(async () => {
  await pool.end();
});

async function deliveries(count: number, status = 'pending'): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await pool.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_name, is_test, status, updated_at)
     SELECT id, $2, $3, 'booking.created', true, $4::webhook_delivery_status, now() FROM unnest($1::uuid[]) AS id`,
    [ids, tenantId, endpointId, status],
  );
  return ids;
}

async function rows(ids: string[]) {
  const { rows: found } = await pool.query<{ id: string; status: string; next_attempt_at: Date | null }>(
    `SELECT id, status::text, next_attempt_at FROM webhook_deliveries WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(found.map((row) => [row.id, row]));
}

describe('the put-off writer (when stepped-aside deliveries are due)', () => {
  it('writes the due time of a delivery as its run read it, and nothing over one that was attempted or settled since', async () => {
    const [due, attempted] = await deliveries(2);
    const [settled] = await deliveries(1, 'succeeded');
    const writer = createPutOffWriter(pool);
    const dueAt = new Date(Date.now() + 60_000);

    const written = await Promise.all([
      writer.write({ deliveryId: due!, attemptCount: 0, dueAt }),
      writer.write({ deliveryId: attempted!, attemptCount: 1, dueAt }),
      writer.write({ deliveryId: settled!, attemptCount: 0, dueAt }),
    ]);
    await writer.close();

    expect(written).toEqual([true, false, false]);
    const after = await rows([due!, attempted!, settled!]);
    expect(after.get(due!)!.next_attempt_at!.getTime()).toBe(dueAt.getTime());
    expect(after.get(attempted!)!.next_attempt_at).toBeNull();
    expect(after.get(settled!)!.next_attempt_at).toBeNull();
  });

  it('races the attempt recorder over the same deliveries, in the other order, without a deadlock, and leaves each as its attempt recorded it', async () => {
    const recorder = createAttemptRecorder(pool, { retryDelaysMs: [0, 1_000], autoDisableAfter: 1_000 });
    const writer = createPutOffWriter(pool);
    const ids: string[] = [];
    for (let round = 0; round < 20; round += 1) {
      const batch = await deliveries(60);
      ids.push(...batch);
      const dueAt = new Date(Date.now() + 60_000);
      await Promise.all([
        ...batch.map((deliveryId) =>
          recorder.record({
            deliveryId,
            endpointId,
            startedAt: new Date(),
            result: { ok: true, statusCode: 200, durationMs: 3, responseBody: 'ok', error: null },
          }),
        ),
        ...[...batch].reverse().map((deliveryId) => writer.write({ deliveryId, attemptCount: 0, dueAt })),
      ]);
    }
    await Promise.all([recorder.close(), writer.close()]);

    const after = [...(await rows(ids)).values()];
    expect(after).toHaveLength(ids.length);
    expect(after.every((row) => row.status === 'succeeded' && row.next_attempt_at === null)).toBe(true);
  });
});
