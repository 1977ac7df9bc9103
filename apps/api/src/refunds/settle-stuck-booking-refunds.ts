import type { Db, Prisma } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { settleStuckRefunds } from '../payments/settle-stuck-refunds';
import type { SettleDeps } from './refund-bookkeeping';
import { sendAgain, settleFromProvider, type PendingRefund } from './settle-or-ask-again';

const BATCH = 50;

type Claimed = {
  id: string;
  booking_id: string;
  amount_cents: number;
  provider_refund_id: string | null;
  created_at: Date;
  payment_intent_id: string;
};

/**
 * Refunds of bookings' card payments still pending with no word from Stripe that settles them,
 * whose amount would otherwise stay reserved for good:
 *
 * - Stripe never answered about it, five minutes after it was reserved or last asked about: the
 *   request's call failed after the SDK's retries, Stripe's answer did not say whether an earlier
 *   try made it (a rate limit, a refused key), or the process died before asking, so no
 *   notification may ever come. It is settled from Stripe's record of it, or sent again under the
 *   same key when Stripe shows none (sendAgain), so a request that did reach Stripe is never paid
 *   twice; but only while Stripe still applies the key (keyStillProtects: made less than 23 hours
 *   ago). An older one is left pending and logged for an operator, who may reconcile it once the
 *   amount is known not to have been given back another way.
 * - Stripe answered pending (its provider refund is known: ours, an automatic refund, one made in
 *   the dashboard), a day after that or after it was last asked about: its notification may have
 *   been lost (an endpoint failing past Stripe's retries, an event type not subscribed). It is
 *   settled from Stripe's record of it, never sent again; one still pending is asked about again
 *   a day later.
 *
 * Both through settleFromProvider, exactly as the refund's notification would settle it; its
 * outcome is booked once, whoever gets there first (settleRefund). The claims (FOR UPDATE SKIP
 * LOCKED, updated_at bumped) are this file's; the run is settleStuckRefunds'.
 */
export function settleStuckBookingRefunds(
  deps: SettleDeps & { db: Db; stripe: Stripe | null; logger: Logger; signal?: AbortSignal },
  now = new Date(),
): Promise<number> {
  const stripe = deps.stripe;
  if (!stripe) return Promise.resolve(0);
  const withStripe = { ...deps, stripe };
  const pending = (row: Claimed): PendingRefund => ({
    id: row.id,
    bookingId: row.booking_id,
    amountCents: row.amount_cents,
    providerRefundId: row.provider_refund_id,
    paymentIntentId: row.payment_intent_id,
  });
  return settleStuckRefunds(
    {
      name: 'booking',
      byHand: 'reconcile it by hand',
      claim: (which, dueMs) => claim(deps.db, which, dueMs, now),
      settleFromProvider: async (row) => (await settleFromProvider(withStripe, pending(row))) !== null,
      sendAgain: (row) => sendAgain(withStripe, pending(row)),
      logFields: (row) => ({ booking_id: row.booking_id }),
    },
    deps,
    now,
  );
}

/** Claims a batch of one kind of pending booking refunds untouched for `dueMs`, least recently touched first. */
function claim(db: Db, kind: Prisma.Sql, dueMs: number, now: Date): Promise<Claimed[]> {
  return db.$queryRaw<Claimed[]>`
    WITH stuck AS (
      SELECT r.id, p.provider_reference AS payment_intent_id
      FROM refunds r
      JOIN payments p ON p.id = r.payment_id
      WHERE r.status = 'pending' AND ${kind}
        AND r.updated_at <= ${new Date(now.getTime() - dueMs)}
      ORDER BY r.updated_at
      LIMIT ${BATCH}
      FOR UPDATE OF r SKIP LOCKED)
    UPDATE refunds r SET updated_at = ${now}
    FROM stuck WHERE r.id = stuck.id
    RETURNING r.id, r.booking_id, r.amount_cents, r.provider_refund_id, r.created_at, stuck.payment_intent_id`;
}
