import type pg from 'pg';
import type { AttemptResult } from '../delivery/post-webhook';
import { failureRuns } from './failure-runs';
import { groupCalls } from './group-calls';

export type AttemptOutcome = 'succeeded' | 'retrying' | 'abandoned';

export interface AttemptToRecord {
  deliveryId: string;
  endpointId: string;
  startedAt: Date;
  result: AttemptResult;
}

export interface RecordedAttempt {
  outcome: AttemptOutcome;
  /** This attempt's failure disabled its endpoint. */
  endpointDisabled: boolean;
  nextDelayMs: number;
}

export interface AttemptRecorder {
  /** Resolves once the attempt is committed; rejects when its batch failed (nothing of it is stored). */
  record(attempt: AttemptToRecord): Promise<RecordedAttempt>;
  /** Writes what waits and resolves when every batch has ended. */
  close(): Promise<void>;
}

export interface AttemptRecorderOptions {
  /** WEBHOOK_RETRY_DELAYS_MS: one delay per attempt, so its length is the number of attempts. */
  retryDelaysMs: number[];
  autoDisableAfter: number;
  /** Most attempts written by one statement. Default 100. */
  maxBatch?: number;
  /** Longest an attempt waits for others to share its batch while another batch is being written. Default 10. */
  maxWaitMs?: number;
}

// Deliveries, then endpoints, each in id order, so two batches (of two dispatchers) never wait on
// each other in a circle.
const LOCK_DELIVERIES: pg.QueryConfig = {
  name: 'dispatcher-lock-deliveries',
  text: `SELECT id, attempt_count FROM webhook_deliveries WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
};
const LOCK_ENDPOINTS: pg.QueryConfig = {
  name: 'dispatcher-lock-endpoints',
  text: `SELECT id FROM webhook_endpoints WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
};
// After the locks, in a statement of its own: its snapshot then sees every attempt committed
// before the locks were granted, so attempt numbers never repeat under races.
const WRITE_ATTEMPTS: pg.QueryConfig = {
  name: 'dispatcher-write-attempts',
  text: `
    WITH input AS (
      SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[], $7::bool[],
                           $8::text[], $9::timestamptz[])
        AS i(delivery_id, started_at, duration_ms, status_code, error, response_body, succeeded, status, next_attempt_at)
    ),
    attempts AS (
      INSERT INTO webhook_attempts
        (id, delivery_id, attempt_number, started_at, duration_ms, status_code, error, response_body, succeeded)
      SELECT gen_random_uuid(), i.delivery_id,
             (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = i.delivery_id) + 1,
             i.started_at, i.duration_ms, i.status_code, i.error, i.response_body, i.succeeded
      FROM input i
    ),
    deliveries AS (
      UPDATE webhook_deliveries d SET
        attempt_count = d.attempt_count + 1,
        last_attempt_at = i.started_at,
        status = i.status::webhook_delivery_status,
        next_attempt_at = i.next_attempt_at,
        updated_at = now()
      FROM input i WHERE d.id = i.delivery_id
    ),
    runs AS (
      SELECT * FROM unnest($10::uuid[], $11::int[], $12::bool[], $13::int[], $14::int[])
        AS r(endpoint_id, lead_failures, has_success, trail_failures, longest_run)
    ),
    before AS (
      SELECT e.id, e.status, e.consecutive_failures,
             (r.lead_failures > 0 AND e.consecutive_failures + r.lead_failures >= $15) OR r.longest_run >= $15 AS reaches
      FROM webhook_endpoints e JOIN runs r ON r.endpoint_id = e.id
    )
    UPDATE webhook_endpoints e SET
      consecutive_failures = CASE WHEN r.has_success THEN r.trail_failures ELSE e.consecutive_failures + r.lead_failures END,
      status = CASE WHEN b.reaches THEN 'disabled'::webhook_endpoint_status ELSE e.status END,
      disabled_at = CASE WHEN b.reaches AND e.status = 'active' THEN now() ELSE e.disabled_at END,
      updated_at = now()
    FROM runs r JOIN before b ON b.id = r.endpoint_id
    WHERE e.id = r.endpoint_id
      AND (r.lead_failures > 0 OR r.longest_run > 0 OR e.consecutive_failures > 0)
    RETURNING e.id::text AS id, (b.reaches AND b.status = 'active') AS just_disabled`,
};

/**
 * Records attempts in batches (group commit): an attempt joins the batch being gathered, which is
 * written by one transaction of four statements (five with a failure among them or several
 * endpoints), whatever its size, when nothing else is being written, when it holds `maxBatch`
 * attempts, or `maxWaitMs` after its first attempt. Each caller waits for its own batch's commit,
 * so a job completes only once its attempt is stored: a crash before the commit leaves the job to
 * run again, never an attempt unrecorded. A batch that fails rejects every caller in it, and
 * BullMQ runs each of those jobs again.
 *
 * A batch stores for each attempt what recording it alone would: the attempt row, the delivery's
 * state (its attempt count read under the row's lock, so a redeliver during the attempt starts
 * the new schedule with it), and the endpoint's run of consecutive failures in the batch's order,
 * which disables it at `autoDisableAfter`.
 */
export function createAttemptRecorder(pool: pg.Pool, options: AttemptRecorderOptions): AttemptRecorder {
  const grouped = groupCalls<AttemptToRecord, RecordedAttempt>(
    (attempts) => inTransaction(pool, (client) => writeAttempts(client, attempts, options)),
    {
      maxGroup: options.maxBatch ?? 100,
      maxWaitMs: options.maxWaitMs ?? 10,
      // A delivery has one job at a time, but a job run again after a lost lock could meet its
      // earlier run here: one batch records one attempt per delivery.
      clash: (a, b) => a.deliveryId === b.deliveryId,
    },
  );
  return { record: (attempt) => grouped.call(attempt), close: () => grouped.close() };
}

async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    client.release();
    return result;
  } catch (error) {
    // Dropped rather than reused: after a client-side timeout its connection may still be busy.
    client.release(error instanceof Error ? error : new Error(String(error)));
    throw error;
  }
}

async function writeAttempts(
  client: pg.PoolClient,
  attempts: AttemptToRecord[],
  options: AttemptRecorderOptions,
): Promise<RecordedAttempt[]> {
  const { rows: locked } = await client.query<{ id: string; attempt_count: number }>({
    ...LOCK_DELIVERIES,
    values: [attempts.map((a) => a.deliveryId)],
  });
  const countById = new Map(locked.map((row) => [row.id, row.attempt_count]));
  const endpointIds = [...new Set(attempts.map((a) => a.endpointId))];
  // Only failures can disable an endpoint, and deciding that needs its run read under its lock. A
  // batch of successes to one endpoint only resets its run (an UPDATE that locks the one row
  // itself, when the run is not 0 already), so such batches do not queue behind each other.
  if (endpointIds.length > 1 || attempts.some((a) => !a.result.ok)) {
    await client.query({ ...LOCK_ENDPOINTS, values: [endpointIds] });
  }

  const now = Date.now();
  const recorded = attempts.map((a): RecordedAttempt => {
    const made = (countById.get(a.deliveryId) ?? 0) + 1;
    const nextDelayMs = options.retryDelaysMs[made] ?? 0;
    const outcome = a.result.ok ? 'succeeded' : made >= options.retryDelaysMs.length ? 'abandoned' : 'retrying';
    return { outcome, endpointDisabled: false, nextDelayMs };
  });
  const runs = endpointIds.map((id) =>
    failureRuns(attempts.filter((a) => a.endpointId === id).map((a) => a.result.ok)),
  );
  const { rows: endpoints } = await client.query<{ id: string; just_disabled: boolean }>({
    ...WRITE_ATTEMPTS,
    values: [
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.startedAt),
      attempts.map((a) => Math.round(a.result.durationMs)),
      attempts.map((a) => a.result.statusCode),
      attempts.map((a) => withoutNul(a.result.error)),
      attempts.map((a) => withoutNul(a.result.responseBody)),
      attempts.map((a) => a.result.ok),
      recorded.map((r) => (r.outcome === 'retrying' ? 'pending' : r.outcome)),
      recorded.map((r) => (r.outcome === 'retrying' ? new Date(now + r.nextDelayMs) : null)),
      endpointIds,
      runs.map((r) => r.leading),
      runs.map((r) => r.reset),
      runs.map((r) => r.trailing),
      runs.map((r) => r.longestInner),
      options.autoDisableAfter,
    ],
  });
  // The warning about a disabled endpoint goes with its last failed attempt of the batch.
  const disabled = new Set(endpoints.filter((e) => e.just_disabled).map((e) => e.id));
  for (let i = attempts.length - 1; i >= 0 && disabled.size > 0; i -= 1) {
    const { endpointId, result } = attempts[i]!;
    if (!result.ok && disabled.delete(endpointId)) recorded[i]!.endpointDisabled = true;
  }
  return recorded;
}

/** PostgreSQL text cannot hold NUL, and a receiver's answer may contain anything. */
function withoutNul(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '\uFFFD');
}
