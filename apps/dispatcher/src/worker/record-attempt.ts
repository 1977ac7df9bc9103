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
    isLastAttempt: boolean;
    nextDelayMs: number;
    autoDisableAfter: number;
  },
): Promise<{ outcome: AttemptOutcome; endpointDisabled: boolean }> {
  const { result } = input;
  const outcome: AttemptOutcome = result.ok ? 'succeeded' : input.isLastAttempt ? 'abandoned' : 'retrying';
  return db.$transaction(async (tx) => {
    const previous = await tx.webhookAttempt.count({ where: { deliveryId: input.deliveryId } });
    await tx.webhookAttempt.create({
      data: {
        deliveryId: input.deliveryId,
        attemptNumber: previous + 1,
        startedAt: input.startedAt,
        durationMs: Math.round(result.durationMs),
        statusCode: result.statusCode,
        error: result.error,
        responseBody: result.responseBody,
        succeeded: result.ok,
      },
    });
    await tx.webhookDelivery.update({
      where: { id: input.deliveryId },
      data: {
        attemptCount: { increment: 1 },
        lastAttemptAt: input.startedAt,
        status: outcome === 'retrying' ? 'pending' : outcome,
        nextAttemptAt: outcome === 'retrying' ? new Date(Date.now() + input.nextDelayMs) : null,
      },
    });
    if (result.ok) {
      await tx.webhookEndpoint.updateMany({
        where: { id: input.endpointId, consecutiveFailures: { gt: 0 } },
        data: { consecutiveFailures: 0 },
      });
      return { outcome, endpointDisabled: false };
    }
    const [endpoint] = await tx.$queryRaw<{ status: string; just_disabled: boolean }[]>`
      UPDATE webhook_endpoints SET
        consecutive_failures = consecutive_failures + 1,
        status = CASE WHEN consecutive_failures + 1 >= ${input.autoDisableAfter} THEN 'disabled'::webhook_endpoint_status ELSE status END,
        disabled_at = CASE WHEN consecutive_failures + 1 >= ${input.autoDisableAfter} AND status = 'active' THEN now() ELSE disabled_at END,
        updated_at = now()
      WHERE id = ${input.endpointId}::uuid
      RETURNING status::text AS status, (consecutive_failures = ${input.autoDisableAfter}) AS just_disabled`;
    return { outcome, endpointDisabled: endpoint?.just_disabled ?? false };
  });
}
