import { randomUUID } from 'node:crypto';
import { sleep, waitUntil } from '@booking/test-kit';
import pg from 'pg';
import { createAttemptRecorder, type AttemptToRecord } from '../src/worker/attempt-recorder';
import { seedDeliveryRows, type DeliveryRows } from './support/delivery-rows';

// The recorder on rows of this file's own (see delivery-rows).
const RETRY_DELAYS_MS = [0, 100, 200, 300, 400, 500];
let pool: pg.Pool;
let endpointId: string;
let seeded: DeliveryRows;

beforeAll(async () => {
  seeded = await seedDeliveryRows('Recorder tests');
  ({ pool, endpointId } = seeded);
});

afterAll(async () => {
  await pool.end();
});

const deliveries = (count: number) => seeded.deliveries(count);

function attempt(deliveryId: string, ok = true): AttemptToRecord {
  return {
    deliveryId,
    endpointId,
    startedAt: new Date(),
    result: ok
      ? { ok: true, statusCode: 200, durationMs: 3, responseBody: 'ok', error: null }
      : { ok: false, statusCode: 500, durationMs: 3, responseBody: 'no', error: null },
  };
}

/** Counts the transactions the recorder runs: each batch takes one connection from the pool. */
function countBatches(): { readonly count: number } {
  const counter = { count: 0 };
  pool.on('acquire', () => (counter.count += 1));
  return counter;
}

async function attemptRows(ids: string[]) {
  const { rows } = await pool.query<{ delivery_id: string; attempt_number: number; attempt_count: number }>(
    `SELECT a.delivery_id, a.attempt_number, d.attempt_count
     FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
     WHERE a.delivery_id = ANY($1::uuid[]) ORDER BY a.delivery_id, a.attempt_number`,
    [ids],
  );
  return rows;
}

describe('the attempt recorder (group commit)', () => {
  afterEach(() => pool.removeAllListeners('acquire'));

  it('when 100 jobs record their attempts at once, then every row is stored, each job learns its outcome, and two batches wrote them all', async () => {
    const ids = await deliveries(100);
    const recorder = createAttemptRecorder(pool, { retryDelaysMs: RETRY_DELAYS_MS, autoDisableAfter: 20 });
    const batches = countBatches();

    const outcomes = await Promise.all(ids.map((id, i) => recorder.record(attempt(id, i % 2 === 0))));

    // The first attempt goes at once (nothing else was being written); the 99 that came while it
    // was written share the next batch.
    expect(batches.count).toBe(2);
    expect(outcomes.filter((o) => o.outcome === 'succeeded')).toHaveLength(50);
    expect(outcomes.filter((o) => o.outcome === 'retrying' && o.nextDelayMs === 100)).toHaveLength(50);
    const rows = await attemptRows(ids);
    expect(rows).toHaveLength(100);
    expect(rows.every((r) => r.attempt_number === 1 && r.attempt_count === 1)).toBe(true);
    await recorder.close();
  });

  it('when a batch fails, then every job in it is rejected and nothing of it is stored, and the same attempts record on their next run', async () => {
    const ids = await deliveries(10);
    const recorder = createAttemptRecorder(pool, { retryDelaysMs: RETRY_DELAYS_MS, autoDisableAfter: 20 });
    const [first, ...rest] = ids;
    const leading = recorder.record(attempt(first!));
    // A delivery deleted during its attempt: its row cannot be written, so its batch fails.
    const failing = [...rest.map((id) => recorder.record(attempt(id))), recorder.record(attempt(randomUUID()))];

    await expect(leading).resolves.toMatchObject({ outcome: 'succeeded' });
    const settled = await Promise.allSettled(failing);
    expect(settled.map((s) => s.status)).toEqual(failing.map(() => 'rejected'));
    expect(await attemptRows(rest)).toHaveLength(0);

    // BullMQ runs each rejected job again; this time the batch holds only what can be written.
    await Promise.all(rest.map((id) => recorder.record(attempt(id))));
    expect((await attemptRows(ids)).map((r) => r.attempt_number)).toEqual(ids.map(() => 1));
    await recorder.close();
  });

  it('when two dispatchers record attempts of the same deliveries at the same time, then attempt numbers never repeat and the counts add up', async () => {
    const ids = await deliveries(20);
    const otherPool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
    const one = createAttemptRecorder(pool, { retryDelaysMs: RETRY_DELAYS_MS, autoDisableAfter: 1000 });
    const two = createAttemptRecorder(otherPool, { retryDelaysMs: RETRY_DELAYS_MS, autoDisableAfter: 1000 });
    try {
      // Three rounds, each recording every delivery's attempt through both recorders at once.
      for (let round = 0; round < 3; round += 1) {
        await Promise.all(ids.flatMap((id) => [one.record(attempt(id, false)), two.record(attempt(id, false))]));
      }
      const rows = await attemptRows(ids);
      expect(rows).toHaveLength(ids.length * 6);
      for (const id of ids) {
        const mine = rows.filter((r) => r.delivery_id === id);
        expect(mine.map((r) => r.attempt_number)).toEqual([1, 2, 3, 4, 5, 6]);
        expect(mine.every((r) => r.attempt_count === 6)).toBe(true);
      }
      const { rows: endpoint } = await pool.query<{ consecutive_failures: number }>(
        'SELECT consecutive_failures FROM webhook_endpoints WHERE id = $1',
        [endpointId],
      );
      expect(endpoint[0]?.consecutive_failures).toBe(ids.length * 6);
    } finally {
      await Promise.all([one.close(), two.close()]);
      await otherPool.end();
    }
  });

  it("when a batch meets another dispatcher's batch of the same deliveries still in flight, then it waits for that commit and writes the next attempt numbers and schedule step", async () => {
    const ids = await deliveries(3);
    const recorder = createAttemptRecorder(pool, { retryDelaysMs: RETRY_DELAYS_MS, autoDisableAfter: 1000 });
    // The other dispatcher's batch: it has written attempt 1 of each delivery and not yet committed.
    const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await other.connect();
    try {
      const { rows: backend } = await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await other.query('BEGIN');
      await other.query(`UPDATE webhook_deliveries SET attempt_count = attempt_count + 1 WHERE id = ANY($1::uuid[])`, [
        ids,
      ]);
      await other.query(
        `INSERT INTO webhook_attempts (id, delivery_id, attempt_number, started_at, duration_ms, succeeded)
         SELECT gen_random_uuid(), id, 1, now(), 3, false FROM unnest($1::uuid[]) AS id`,
        [ids],
      );
      const recorded = Promise.all(ids.map((id) => recorder.record(attempt(id, false))));
      // A batch that fails, rather than waits, fails the test with its own error.
      await Promise.race([untilWaitingOnLock(backend[0]!.pid), recorded]);
      // Held a while longer: the retry's time must count from the locks, not from when it began to wait.
      await sleep(300);
      const committingAt = Date.now();
      await other.query('COMMIT');

      // Attempt 2 of each: its number counts the attempt committed while it waited, and the
      // schedule goes on from there (the delay after a second attempt).
      expect(await recorded).toEqual(
        ids.map(() => ({ outcome: 'retrying', endpointDisabled: false, nextDelayMs: 200 })),
      );
      const rows = await attemptRows(ids);
      for (const id of ids) {
        const mine = rows.filter((r) => r.delivery_id === id);
        expect(mine.map((r) => r.attempt_number)).toEqual([1, 2]);
        expect(mine.every((r) => r.attempt_count === 2)).toBe(true);
      }
      const { rows: next } = await pool.query<{ next_attempt_at: Date }>(
        'SELECT next_attempt_at FROM webhook_deliveries WHERE id = ANY($1::uuid[])',
        [ids],
      );
      for (const { next_attempt_at } of next) {
        expect(next_attempt_at.getTime()).toBeGreaterThanOrEqual(committingAt + 200);
      }
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
      await recorder.close();
    }
  });

  it('when a schedule step is longer than 24.9 days (past an int of milliseconds), then the failed attempt is recorded with it', async () => {
    const thirtyDaysMs = 30 * 24 * 3600 * 1000;
    const [id] = await deliveries(1);
    const recorder = createAttemptRecorder(pool, { retryDelaysMs: [0, thirtyDaysMs, 0], autoDisableAfter: 1000 });
    try {
      const before = Date.now();
      await expect(recorder.record(attempt(id!, false))).resolves.toEqual({
        outcome: 'retrying',
        endpointDisabled: false,
        nextDelayMs: thirtyDaysMs,
      });
      const after = Date.now();
      const { rows } = await pool.query<{ next_attempt_at: Date }>(
        'SELECT next_attempt_at FROM webhook_deliveries WHERE id = $1',
        [id],
      );
      const next = rows[0]!.next_attempt_at.getTime();
      expect(next).toBeGreaterThanOrEqual(before + thirtyDaysMs);
      expect(next).toBeLessThanOrEqual(after + thirtyDaysMs);
    } finally {
      await recorder.close();
    }
  });
});

/** Waits (at most 10 s) until a session is blocked by a lock that session `holderPid` holds. */
async function untilWaitingOnLock(holderPid: number): Promise<void> {
  await waitUntil(
    async () => {
      const { rows } = await pool.query<{ waiting: number }>(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`,
        [holderPid],
      );
      return rows[0]!.waiting > 0;
    },
    { intervalMs: 20, what: 'a session to wait on the open batch' },
  );
}
