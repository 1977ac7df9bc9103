import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { keyStillProtects, mayGoOn, STUCK_REFUND_MS } from '../payments/stuck-refund-timing';
import type { SettleDeps } from './refund-bookkeeping';
import { sendAgain, settleFromProvider, type PendingRefund } from './settle-or-ask-again';

const BATCH = 50;

type Claimed = {
  id: string;
  booking_id: string;
  amount_cents: number;
  created_at: Date;
  payment_intent_id: string;
};

/**
 * Refunds of bookings' card payments still pending that Stripe never answered about, five
 * minutes after they were reserved or last asked about: the request's call failed after the
 * SDK's retries, Stripe's answer did not say whether an earlier try made it (a rate limit, a
 * refused key), or the process died before asking. Nothing may exist at Stripe to notify us, and
 * the amount they reserve would stay unrefundable for good. Each is settled from Stripe's record
 * of it (settleFromProvider, as the reconcile route does); when Stripe shows none it is sent
 * again under the same key (sendAgain), so a request that did reach Stripe is never paid twice,
 * but only while Stripe still applies the key (keyStillProtects: made less than 23 hours ago).
 * An older one is left pending and logged for an operator, who may reconcile it once the amount
 * is known not to have been given back another way. Its outcome is booked once, whoever gets
 * there first (settleRefund).
 *
 * One batch per call, claimed FOR UPDATE SKIP LOCKED by putting it back five minutes
 * (updated_at), so runs on several pods take different refunds; the run stops short of its
 * claims running out, or when the worker shuts down (mayGoOn). One Stripe still does not answer
 * about (or whose payment it does not know), or whose outcome cannot be booked, is logged and
 * comes up again five minutes later, behind the others. Returns how many Stripe answered about.
 */
export async function settleStuckBookingRefunds(
  deps: SettleDeps & { db: Db; stripe: Stripe | null; logger: Logger; signal?: AbortSignal },
  now = new Date(),
): Promise<number> {
  const stripe = deps.stripe;
  if (!stripe || deps.signal?.aborted) return 0;
  const claimed = await deps.db.$queryRaw<Claimed[]>`
    WITH stuck AS (
      SELECT r.id, p.provider_reference AS payment_intent_id
      FROM refunds r
      JOIN payments p ON p.id = r.payment_id
      WHERE r.status = 'pending' AND r.provider_refund_id IS NULL
        AND r.updated_at <= ${new Date(now.getTime() - STUCK_REFUND_MS)}
      ORDER BY r.updated_at
      LIMIT ${BATCH}
      FOR UPDATE OF r SKIP LOCKED)
    UPDATE refunds r SET updated_at = ${now}
    FROM stuck WHERE r.id = stuck.id
    RETURNING r.id, r.booking_id, r.amount_cents, r.created_at, stuck.payment_intent_id`;
  const withStripe = { ...deps, stripe };
  let answered = 0;
  for (const row of claimed) {
    if (!mayGoOn(now, deps.signal)) break;
    const refund: PendingRefund = {
      id: row.id,
      bookingId: row.booking_id,
      amountCents: row.amount_cents,
      providerRefundId: null,
      paymentIntentId: row.payment_intent_id,
    };
    try {
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
