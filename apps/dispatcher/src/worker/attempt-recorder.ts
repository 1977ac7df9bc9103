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
  /**
   * Resolves once the attempt is committed; rejects when its batch failed (nothing of it is
   * stored), and when the answer never came (see createAttemptRecorder).
   */
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

// The batch in one call: the function (its migration says how) locks the deliveries, and the
// endpoints when the batch holds a failure or more than one endpoint, then writes with a snapshot
// taken after the locks were granted. It was four statements in a transaction, each a round trip
// that kept the batch's jobs waiting.
const RECORD_ATTEMPTS: pg.QueryConfig = {
  name: 'dispatcher-record-attempts',
  text: `
    SELECT statuses, next_delays_ms, disabled_endpoints
    FROM record_webhook_attempts($1::uuid[], $2::timestamptz[], $3::int[], $4::int[], $5::text[], $6::text[],
                                 $7::bool[], $8::uuid[], $9::int[], $10::bool[], $11::int[], $12::int[], $13::bigint[],
                                 $14::int)`,
};

/**
 * Records attempts in batches (group commit): an attempt joins the batch being gathered, which is
 * written by one call of the database function record_webhook_attempts (one round trip, its own
 * transaction), whatever its size, when nothing else is being written, when it holds `maxBatch`
 * attempts, or `maxWaitMs` after its first attempt. Each caller waits for its own batch's commit,
 * so a job completes only once its attempt is stored: a crash before the commit leaves the job to
 * run again, never an attempt unrecorded. A batch that fails
 * rejects every caller in it, and BullMQ runs each of those jobs again. So does a batch whose
 * answer the pool stopped waiting for (its client-side timeout, a second past the server's
 * statement timeout, which would have rolled the batch back), though the server may still have
 * committed it: a job whose attempt was then stored as the last or a success ends on its next
 * run, and one stored as retrying attempts again after BullMQ's backoff (a second), ahead of its
 * schedule, which that attempt moves on a step, as it does the endpoint's run of failures.
 *
 * A batch stores for each attempt what recording it alone would: the attempt row, the delivery's
 * state (its attempt count read under the row's lock, so a redeliver during the attempt starts
 * the new schedule with it), and the endpoint's run of consecutive failures in the batch's order,
 * which disables it at `autoDisableAfter`.
 */
export function createAttemptRecorder(pool: pg.Pool, options: AttemptRecorderOptions): AttemptRecorder {
  const grouped = groupCalls<AttemptToRecord, RecordedAttempt>((attempts) => writeAttempts(pool, attempts, options), {
    maxGroup: options.maxBatch ?? 100,
    maxWaitMs: options.maxWaitMs ?? 10,
    // A delivery has one job at a time, but a job run again after a lost lock could meet its
    // earlier run here: one batch records one attempt per delivery.
    clash: (a, b) => a.deliveryId === b.deliveryId,
  });
  return { record: (attempt) => grouped.call(attempt), close: () => grouped.close() };
}

interface RecordedBatch {
  statuses: ('succeeded' | 'abandoned' | 'pending')[];
  /** bigint: a step may be longer than an int's 24.9 days of milliseconds; pg reads them as text. */
  next_delays_ms: string[];
  disabled_endpoints: string[];
}

async function writeAttempts(
  pool: pg.Pool,
  attempts: AttemptToRecord[],
  options: AttemptRecorderOptions,
): Promise<RecordedAttempt[]> {
  const endpointIds = [...new Set(attempts.map((a) => a.endpointId))];
  const runs = endpointIds.map((id) =>
    failureRuns(attempts.filter((a) => a.endpointId === id).map((a) => a.result.ok)),
  );
  const { rows } = await pool.query<RecordedBatch>({
    ...RECORD_ATTEMPTS,
    values: [
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.startedAt),
      attempts.map((a) => Math.round(a.result.durationMs)),
      attempts.map((a) => a.result.statusCode),
      attempts.map((a) => withoutNul(a.result.error)),
      attempts.map((a) => withoutNul(a.result.responseBody)),
      attempts.map((a) => a.result.ok),
      endpointIds,
      runs.map((r) => r.leading),
      runs.map((r) => r.reset),
      runs.map((r) => r.trailing),
      runs.map((r) => r.longestInner),
      options.retryDelaysMs,
      options.autoDisableAfter,
    ],
  });
  const batch = rows[0]!;
  const recorded = attempts.map((_a, i): RecordedAttempt => ({
    outcome: batch.statuses[i] === 'pending' ? 'retrying' : batch.statuses[i]!,
    endpointDisabled: false,
    nextDelayMs: Number(batch.next_delays_ms[i]),
  }));
  // The warning about a disabled endpoint goes with its last failed attempt of the batch.
  const disabled = new Set(batch.disabled_endpoints);
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
