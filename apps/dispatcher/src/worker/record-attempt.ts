import type { Db } from '@booking/db';
import type { AttemptResult } from '../delivery/post-webhook';

export type AttemptOutcome = 'succeeded' | 'retrying' | 'abandoned';

/**
 * Stores one attempt and its consequences in one transaction: the attempt row, the delivery's
 * state, and the endpoint's run of consecutive failures, which disables it at `autoDisableAfter`.
 */
export async function recordAttempt(
  db: Db,
  input: {
    deliveryId: string;
    endpointId: string;
    startedAt: Date;
    result: AttemptResult;
    /** WEBHOOK_RETRY_DELAYS_MS: one delay per attempt, so its length is the number of attempts. */
    retryDelaysMs: number[];
    autoDisableAfter: number;
  },
): Promise<{ outcome: AttemptOutcome; endpointDisabled: boolean; nextDelayMs: number }> {
  const { result } = input;
  return db.$transaction(async (tx) => {
    // Read under the row's lock: a redeliver during this attempt resets the schedule, and this
    // attempt then counts as the first of the new one rather than ending the old.
    const [delivery] = await tx.$queryRaw<{ attempt_count: number }[]>`
      SELECT attempt_count FROM webhook_deliveries WHERE id = ${input.deliveryId}::uuid FOR UPDATE`;
    const made = (delivery?.attempt_count ?? 0) + 1;
    const isLastAttempt = made >= input.retryDelaysMs.length;
    const nextDelayMs = input.retryDelaysMs[made] ?? 0;
    const outcome: AttemptOutcome = result.ok ? 'succeeded' : isLastAttempt ? 'abandoned' : 'retrying';
    const previous = await tx.webhookAttempt.count({ where: { deliveryId: input.deliveryId } });
    await tx.webhookAttempt.create({
      data: {
        deliveryId: input.deliveryId,
        attemptNumber: previous + 1,
        startedAt: input.startedAt,
        durationMs: Math.round(result.durationMs),
        statusCode: result.statusCode,
        error: withoutNul(result.error),
        responseBody: withoutNul(result.responseBody),
        succeeded: result.ok,
      },
    });
    await tx.webhookDelivery.update({
      where: { id: input.deliveryId },
      data: {
        attemptCount: { increment: 1 },
        lastAttemptAt: input.startedAt,
        status: outcome === 'retrying' ? 'pending' : outcome,
        nextAttemptAt: outcome === 'retrying' ? new Date(Date.now() + nextDelayMs) : null,
      },
    });
    if (result.ok) {
      await tx.webhookEndpoint.updateMany({
        where: { id: input.endpointId, consecutiveFailures: { gt: 0 } },
        data: { consecutiveFailures: 0 },
      });
      return { outcome, endpointDisabled: false, nextDelayMs };
    }
    const [endpoint] = await tx.$queryRaw<{ status: string; just_disabled: boolean }[]>`
      UPDATE webhook_endpoints SET
        consecutive_failures = consecutive_failures + 1,
        status = CASE WHEN consecutive_failures + 1 >= ${input.autoDisableAfter} THEN 'disabled'::webhook_endpoint_status ELSE status END,
        disabled_at = CASE WHEN consecutive_failures + 1 >= ${input.autoDisableAfter} AND status = 'active' THEN now() ELSE disabled_at END,
        updated_at = now()
      WHERE id = ${input.endpointId}::uuid
      RETURNING status::text AS status, (consecutive_failures = ${input.autoDisableAfter}) AS just_disabled`;
    return { outcome, endpointDisabled: endpoint?.just_disabled ?? false, nextDelayMs };
  });
}

/** PostgreSQL text cannot hold NUL, and a receiver's answer may contain anything. */
function withoutNul(text: string | null): string | null {
  return text === null ? null : text.replaceAll('\u0000', '\uFFFD');
}
