import { Prisma } from '@booking/db';
import type { Logger } from '@booking/logging';
import { keyStillProtects, mayGoOn, STUCK_REFUND_MS, UNSETTLED_REFUND_MS } from './stuck-refund-timing';

/** What a stuck-refund job claims of a refund: its id and when it was made. */
export interface StuckRefund {
  id: string;
  created_at: Date;
}

/** One kind of refund the driver works through (booking refunds, order refunds). */
export interface StuckRefundKind<R extends StuckRefund> {
  /** "booking" or "order": names the log lines. */
  name: string;
  /** What an operator does with one the job will not send again ("reconcile it by hand"). */
  byHand: string;
  /** Claims a batch of pending refunds matching `which`, untouched for `dueMs` (SKIP LOCKED, updated_at bumped). */
  claim(which: Prisma.Sql, dueMs: number): Promise<R[]>;
  /** Settles the refund from Stripe's record of it; false when Stripe shows none. */
  settleFromProvider(refund: R): Promise<boolean>;
  /** Sends the refund again under its idempotency key. */
  sendAgain(refund: R): Promise<unknown>;
  /** The refund's fields in log lines, beside refund_id. */
  logFields(refund: R): Record<string, unknown>;
}

/**
 * The run both stuck-refund jobs share: refunds Stripe never answered about (no provider refund,
 * five minutes untouched) and refunds it answered pending (a day untouched) are claimed, settled
 * from Stripe's record, and the first kind sent again only while Stripe's key still protects it
 * (keyStillProtects); an older one is logged for an operator. One that fails is logged and comes
 * up again when next due. The run stops short of its claims running out, or at shutdown
 * (mayGoOn). Returns how many Stripe answered about.
 */
export async function settleStuckRefunds<R extends StuckRefund>(
  kind: StuckRefundKind<R>,
  deps: { logger: Pick<Logger, 'warn'>; signal?: AbortSignal },
  now: Date,
): Promise<number> {
  if (deps.signal?.aborted) return 0;
  const claimed = [
    ...(await kind.claim(Prisma.sql`r.provider_refund_id IS NULL`, STUCK_REFUND_MS)),
    ...(await kind.claim(Prisma.sql`r.provider_refund_id IS NOT NULL`, UNSETTLED_REFUND_MS)),
  ];
  let answered = 0;
  for (const refund of claimed) {
    if (!mayGoOn(now, deps.signal)) break;
    const fields = { ...kind.logFields(refund), refund_id: refund.id };
    try {
      // False only for a refund Stripe never named: one it did name is listed, or refused.
      if (!(await kind.settleFromProvider(refund))) {
        if (!keyStillProtects(refund.created_at, now)) {
          deps.logger.warn(
            { ...fields, created_at: refund.created_at },
            `stuck ${kind.name} refund: Stripe shows none and may have forgotten its key, so it is not sent again; ${kind.byHand}`,
          );
          continue;
        }
        await kind.sendAgain(refund);
      }
      answered += 1;
    } catch (error) {
      // A refund Stripe refused is failed already (its amount released); the rest wait their turn again.
      deps.logger.warn({ err: error, ...fields }, `stuck ${kind.name} refund: not settled`);
    }
  }
  return answered;
}
