import type { Db, Prisma } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { settleStuckRefunds } from '../payments/settle-stuck-refunds';
import { askProviderRefund, settleFromProvider } from './ask-provider-refund';

const BATCH = 50;

type Claimed = {
  id: string;
  tenant_id: string;
  order_id: string;
  provider_refund_id: string | null;
  created_at: Date;
  payment_intent_id: string;
};

/**
 * Operator refunds of orders (an online payment, a till card tender) still pending with no word
 * from Stripe that settles them, whose wallet value would otherwise stay held for good:
 *
 * - Stripe never answered about it, five minutes after it was reserved or last asked about: the
 *   request's call failed after the SDK's retries, or its process died before asking, so no
 *   notification may ever come. It is settled from Stripe's record of it, or asked for again
 *   under the same key when Stripe shows none, so a request that did reach Stripe is never paid
 *   twice; but only while Stripe still applies the key (keyStillProtects: made less than 23 hours
 *   ago). An older one is left pending and logged for an operator, who may retry the request once
 *   the amount is known not to have been given back another way.
 * - Stripe answered pending, a day after that or after it was last asked about: its
 *   notification may have been lost. It is settled from Stripe's record of it, never asked for
 *   again; one still pending is asked about again a day later.
 *
 * Both through settleFromProvider; the outcome is booked once, whoever gets there first
 * (completeOrderRefund). The claims (FOR UPDATE SKIP LOCKED, updated_at bumped) are this file's;
 * the run is settleStuckRefunds'.
 */
export function settleStuckOrderRefunds(
  deps: { db: Db; stripe: Stripe | null; logger: Pick<Logger, 'warn'>; signal?: AbortSignal },
  now = new Date(),
): Promise<number> {
  const { db, stripe } = deps;
  if (!stripe) return Promise.resolve(0);
  const asked = (row: Claimed) => ({
    tenantId: row.tenant_id,
    orderId: row.order_id,
    refundId: row.id,
    paymentIntentId: row.payment_intent_id,
    providerRefundId: row.provider_refund_id,
  });
  return settleStuckRefunds(
    {
      name: 'order',
      byHand: 'retry it by hand',
      claim: (which, dueMs) => claim(db, which, dueMs, now),
      settleFromProvider: (row) => settleFromProvider(db, stripe, asked(row)),
      sendAgain: (row) => askProviderRefund(db, stripe, asked(row)),
      logFields: (row) => ({ order_id: row.order_id }),
    },
    deps,
    now,
  );
}

/** Claims a batch of one kind of pending operator refunds untouched for `dueMs`, least recently touched first. */
function claim(db: Db, kind: Prisma.Sql, dueMs: number, now: Date): Promise<Claimed[]> {
  return db.$queryRaw<Claimed[]>`
    WITH stuck AS (
      SELECT r.id, COALESCE(t.payment_reference, o.payment_intent_id) AS payment_intent_id
      FROM order_refunds r
      JOIN orders o ON o.id = r.order_id
      LEFT JOIN order_tenders t ON t.id = r.tender_id
      WHERE r.source = 'operator' AND r.status = 'pending' AND ${kind}
        AND r.updated_at <= ${new Date(now.getTime() - dueMs)}
      ORDER BY r.updated_at
      LIMIT ${BATCH}
      FOR UPDATE OF r SKIP LOCKED)
    UPDATE order_refunds r SET updated_at = ${now}
    FROM stuck WHERE r.id = stuck.id
    RETURNING r.id, r.tenant_id, r.order_id, r.provider_refund_id, r.created_at, stuck.payment_intent_id`;
}
