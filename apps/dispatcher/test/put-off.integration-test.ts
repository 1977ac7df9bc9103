import { waitUntil } from '@booking/test-kit';
import type pg from 'pg';
import { createAttemptRecorder } from '../src/worker/attempt-recorder';
import { createPutOffWriter, PUT_OFF } from '../src/worker/put-off';
import { seedDeliveryRows, type DeliveryRows } from './support/delivery-rows';

// The put-off writer on rows of this file's own (see delivery-rows).
let pool: pg.Pool;
let endpointId: string;
let seeded: DeliveryRows;

beforeAll(async () => {
  seeded = await seedDeliveryRows('Put-off tests');
  ({ pool, endpointId } = seeded);
});

afterAll(async () => {
  await pool.end();
});

const deliveries = (count: number, status?: string) => seeded.deliveries(count, status);

/** Each delivery's updated_at now: what a job reading it would see. */
async function readAt(ids: string[]): Promise<Map<string, Date>> {
  const { rows: found } = await pool.query<{ id: string; updated_at: Date }>(
    `SELECT id, updated_at FROM webhook_deliveries WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(found.map((row) => [row.id, row.updated_at]));
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
    const read = await readAt([due!, attempted!, settled!]);
    // Another run's attempt failed and scheduled a retry after this run's read.
    await pool.query(
      `UPDATE webhook_deliveries SET attempt_count = 1, next_attempt_at = now() + interval '1 hour',
              updated_at = updated_at + interval '1 millisecond' WHERE id = $1`,
      [attempted],
    );
    const writer = createPutOffWriter(pool);
    const dueAt = new Date(Date.now() + 60_000);

    const written = await Promise.all(
      [due!, attempted!, settled!].map((deliveryId) =>
        writer.write({ deliveryId, readAt: read.get(deliveryId)!, dueAt }),
      ),
    );
    await writer.close();

    expect(written).toEqual([true, false, false]);
    const after = await rows([due!, attempted!, settled!]);
    expect(after.get(due!)!.next_attempt_at!.getTime()).toBe(dueAt.getTime());
    expect(after.get(attempted!)!.next_attempt_at!.getTime()).toBeGreaterThan(Date.now() + 30 * 60_000);
    expect(after.get(settled!)!.next_attempt_at).toBeNull();
  });

  it('races the attempt recorder over the same deliveries, in the other order, without a deadlock, and leaves each as its attempt recorded it', async () => {
    const recorder = createAttemptRecorder(pool, { retryDelaysMs: [0, 1_000], autoDisableAfter: 1_000 });
    const writer = createPutOffWriter(pool);
    const ids: string[] = [];
    for (let round = 0; round < 20; round += 1) {
      const batch = await deliveries(60);
      const read = await readAt(batch);
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
        ...[...batch].reverse().map((deliveryId) => writer.write({ deliveryId, readAt: read.get(deliveryId)!, dueAt })),
      ]);
    }
    await Promise.all([recorder.close(), writer.close()]);

    const after = [...(await rows(ids)).values()];
    expect(after).toHaveLength(ids.length);
    expect(after.every((row) => row.status === 'succeeded' && row.next_attempt_at === null)).toBe(true);
  });

  it('locks its rows in id order, as the attempt recorder does, so the two never wait on each other in a circle', async () => {
    const [low, high] = (await deliveries(2)).sort();
    const read = await readAt([low!, high!]);
    const holder = await pool.connect();
    const prober = await pool.connect();
    /** Whether another transaction holds a lock on `id`. */
    const locked = async (id: string) => {
      await prober.query('BEGIN');
      try {
        await prober.query('SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE NOWAIT', [id]);
        return false;
      } catch (error) {
        if ((error as { code?: string }).code === '55P03') return true;
        throw error;
      } finally {
        await prober.query('ROLLBACK');
      }
    };
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [high]);
      const dueAt = new Date(Date.now() + 60_000);
      // Listed high first: in that order, the statement would wait on the high row holding nothing.
      const writing = pool.query({
        ...PUT_OFF,
        values: [
          [high, low],
          [read.get(high!), read.get(low!)],
          [dueAt, dueAt],
        ],
      });

      // It holds the low row already, waiting for the high one, as the recorder would.
      await waitUntil(() => locked(low!), { timeoutMs: 5_000, what: 'the low row locked by the put-off' });
      await holder.query('COMMIT');
      expect((await writing).rowCount).toBe(2);
    } finally {
      holder.release();
      prober.release();
    }
  });
});
