import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { settleOrAskAgain } from './ask-provider-refund';

const BATCH = 50;
/**
 * How long an operator's refund may go without Stripe's answer before the job asks Stripe about
 * it, and again after that: well past a request's own call with the SDK's retries.
 */
const STUCK_REFUND_MS = 5 * 60 * 1000;

/**
 * Operator refunds of orders (an online payment, a till card tender) that Stripe never answered
 * about, five minutes after they were reserved or last asked about: the request's call failed
 * after the SDK's retries, or its process died before asking, so no notification may ever come,
 * and the wallet value they hold would stay held for good. Each is settled from Stripe's record
 * of it, or asked for again under the same key when Stripe shows none (settleOrAskAgain), so a
 * request that did reach Stripe is never paid twice. Its outcome is booked once, whoever gets
 * there first (completeOrderRefund).
 *
 * One batch per call, claimed FOR UPDATE SKIP LOCKED by putting it back five minutes (updated_at),
 * so runs on several pods take different refunds. One Stripe still does not answer about, or
 * whose outcome cannot be booked, is logged and comes up again five minutes later, behind the
 * others. Returns how many Stripe answered about.
 */
export async function settleStuckOrderRefunds(
  deps: { db: Db; stripe: Stripe | null; logger: Pick<Logger, 'warn'> },
  now = new Date(),
): Promise<number> {
  const stripe = deps.stripe;
  if (!stripe) return 0;
  const claimed = await deps.db.$queryRaw<
    { id: string; tenant_id: string; order_id: string; payment_intent_id: string }[]
  >`
    WITH stuck AS (
      SELECT r.id, COALESCE(t.payment_reference, o.payment_intent_id) AS payment_intent_id
      FROM order_refunds r
      JOIN orders o ON o.id = r.order_id
      LEFT JOIN order_tenders t ON t.id = r.tender_id
      WHERE r.source = 'operator' AND r.status = 'pending' AND r.provider_refund_id IS NULL
        AND r.updated_at <= ${new Date(now.getTime() - STUCK_REFUND_MS)}
      ORDER BY r.updated_at
      LIMIT ${BATCH}
      FOR UPDATE OF r SKIP LOCKED)
    UPDATE order_refunds r SET updated_at = ${now}
    FROM stuck WHERE r.id = stuck.id
    RETURNING r.id, r.tenant_id, r.order_id, stuck.payment_intent_id`;
  let answered = 0;
  for (const row of claimed) {
    try {
      await settleOrAskAgain(deps.db, stripe, {
        tenantId: row.tenant_id,
        orderId: row.order_id,
        refundId: row.id,
        paymentIntentId: row.payment_intent_id,
      });
      answered += 1;
    } catch (error) {
      // A refund Stripe refused is failed already (its value released); the rest wait their turn again.
      deps.logger.warn({ err: error, order_id: row.order_id, refund_id: row.id }, 'stuck order refund: not settled');
    }
  }
  return answered;
}
