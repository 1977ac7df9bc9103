import { Prisma, type Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { keyStillProtects, mayGoOn, STUCK_REFUND_MS, UNSETTLED_REFUND_MS } from '../payments/stuck-refund-timing';
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
 * outcome is booked once, whoever gets there first (settleRefund). Each kind is claimed a batch
 * per call, FOR UPDATE SKIP LOCKED, by putting it back (updated_at), so runs on several pods take
 * different refunds; the run stops short of its claims running out, or when the worker shuts down
 * (mayGoOn). One Stripe does not answer about (or whose payment it does not know, or that it does
 * not list though it named it), or whose outcome cannot be booked, is logged and comes up again
 * when next due, behind the others. Returns how many Stripe answered about.
 */
export async function settleStuckBookingRefunds(
  deps: SettleDeps & { db: Db; stripe: Stripe | null; logger: Logger; signal?: AbortSignal },
  now = new Date(),
): Promise<number> {
  const stripe = deps.stripe;
  if (!stripe || deps.signal?.aborted) return 0;
  const claimed = [
    ...(await claim(deps.db, Prisma.sql`r.provider_refund_id IS NULL`, STUCK_REFUND_MS, now)),
    ...(await claim(deps.db, Prisma.sql`r.provider_refund_id IS NOT NULL`, UNSETTLED_REFUND_MS, now)),
  ];
  const withStripe = { ...deps, stripe };
  let answered = 0;
  for (const row of claimed) {
    if (!mayGoOn(now, deps.signal)) break;
    const refund: PendingRefund = {
      id: row.id,
      bookingId: row.booking_id,
      amountCents: row.amount_cents,
      providerRefundId: row.provider_refund_id,
      paymentIntentId: row.payment_intent_id,
    };
    try {
      // Null only for a refund Stripe never named: one it did name is listed, or refused above.
      if (!(await settleFromProvider(withStripe, refund))) {
        if (!keyStillProtects(row.created_at, now)) {
          deps.logger.warn(
            { booking_id: row.booking_id, refund_id: row.id, created_at: row.created_at },
            'stuck booking refund: Stripe shows none and may have forgotten its key, so it is not sent again; reconcile it by hand',
          );
          continue;
        }
        await sendAgain(withStripe, refund);
      }
      answered += 1;
    } catch (error) {
      // A refund Stripe refused is failed already (its amount refundable again); the rest wait their turn again.
      deps.logger.warn(
        { err: error, booking_id: row.booking_id, refund_id: row.id },
        'stuck booking refund: not settled',
      );
    }
  }
  return answered;
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
