import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import type { SettleDeps } from './refund-bookkeeping';
import { settleOrAskAgain } from './settle-or-ask-again';

const BATCH = 50;
/**
 * How long a booking refund may go without Stripe's answer before the job asks Stripe about it,
 * and again after that: well past a request's own call with the SDK's retries.
 */
const STUCK_REFUND_MS = 5 * 60 * 1000;

type Claimed = { id: string; booking_id: string; amount_cents: number; payment_intent_id: string };

/**
 * Refunds of bookings' card payments still pending that Stripe never answered about, five
 * minutes after they were reserved or last asked about: the request's call failed after the
 * SDK's retries, Stripe's answer did not say whether an earlier try made it (a rate limit, a
 * refused key), or the process died before asking. Nothing may exist at Stripe to notify us, and
 * the amount they reserve would stay unrefundable for good. Each is settled as the reconcile
 * route settles it (settleOrAskAgain): from Stripe's record of it, or asked for again under the
 * same key when Stripe shows none, so a request that did reach Stripe is never paid twice; its
 * outcome is booked once, whoever gets there first (settleRefund).
 *
 * One batch per call, claimed FOR UPDATE SKIP LOCKED by putting it back five minutes
 * (updated_at), so runs on several pods take different refunds. One Stripe still does not answer
 * about (or whose payment it does not know), or whose outcome cannot be booked, is logged and
 * comes up again five minutes later, behind the others. Returns how many Stripe answered about.
 */
export async function settleStuckBookingRefunds(
  deps: SettleDeps & { db: Db; stripe: Stripe | null; logger: Logger },
  now = new Date(),
): Promise<number> {
  const stripe = deps.stripe;
  if (!stripe) return 0;
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
    RETURNING r.id, r.booking_id, r.amount_cents, stuck.payment_intent_id`;
  let answered = 0;
  for (const row of claimed) {
    try {
      await settleOrAskAgain(
        { ...deps, stripe },
        {
          id: row.id,
          bookingId: row.booking_id,
          amountCents: row.amount_cents,
          providerRefundId: null,
          paymentIntentId: row.payment_intent_id,
        },
      );
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
