import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import type { HoldStore } from '../holds/hold-store';
import { AUTOMATIC_REFUND_REASON, recordAutomaticRefund } from '../refunds/automatic-refund';
import { providerOutcome } from '../refunds/create-refund';
import { isAlreadyRefunded } from './provider-call';

type Deps = { db: Db; holds: HoldStore; stripe: Stripe; logger?: Logger };

/**
 * Gives back a card payment that could not buy its seats (or arrived for a booking that was no
 * longer payable): asks the provider to refund it in full, then records its answer as the
 * payment's `automatic` refund (recordAutomaticRefund, which also settles the booking and clears
 * the payment's refund_due).
 *
 * A retry after a crash or a failed call never refunds twice: the provider refuses a second full
 * refund, and the refund it made is then looked up and recorded once (its id is unique). A
 * delivery that asked after the payment's automatic refund was recorded (it stalled while another
 * one's refund failed, then got a second refund made) records nothing: that refund is logged, and
 * the refund notifications record it as a refund made in Stripe.
 */
export async function refundForReview(deps: Deps, bookingId: string, paymentIntentId: string): Promise<void> {
  const providerRefund = await askForRefund(deps.stripe, bookingId, paymentIntentId);
  if (!providerRefund) {
    // Refunded in full, but not by us (Stripe's dashboard): nothing is left to ask for, and the
    // refund notifications record those refunds. A single statement: no other lock is held.
    await deps.db.payment.updateMany({
      where: { providerReference: paymentIntentId, refundDue: true },
      data: { refundDue: false },
    });
    return;
  }
  const recorded = await deps.db.$transaction((tx) => recordAutomaticRefund(tx, deps, paymentIntentId, providerRefund));
  if (recorded.kind === 'not_due') {
    deps.logger?.warn(
      { booking_id: bookingId, payment_intent_id: paymentIntentId, provider_refund_id: providerRefund.id },
      'a second automatic refund was made after the first was recorded; the refund notifications record it',
    );
  }
  if (recorded.kind === 'recorded' && recorded.release) {
    const { slotId, holdId, seats } = recorded.release;
    await deps.holds.releaseAfterCommit(slotId, holdId, seats);
  }
}

/**
 * Asks the provider to refund the whole payment. When it was refunded already (by a delivery
 * whose bookkeeping did not commit, or a concurrent one), the refund made then is looked up
 * instead; null when none of the refunds that give it back is automatic.
 */
async function askForRefund(stripe: Stripe, bookingId: string, paymentIntentId: string): Promise<Stripe.Refund | null> {
  try {
    // No fixed idempotency key: Stripe keeps a key's first answer even when it is a 500, which
    // would block this refund for good. The SDK keys its own network retries, and a second
    // full refund of the same payment is refused, which is what makes retries safe here.
    return await stripe.refunds.create({
      payment_intent: paymentIntentId,
      // `automatic` lets the refund notifications tell it from a dashboard refund.
      metadata: { booking_id: bookingId, automatic: 'true', reason: AUTOMATIC_REFUND_REASON },
    });
  } catch (error) {
    if (!isAlreadyRefunded(error)) throw error;
  }
  // Every page: the automatic refund that gives the money back, if it is one of ours. A failed
  // one gave nothing back, so it is not what made the provider refuse.
  for await (const refund of stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 })) {
    if (refund.metadata?.automatic === 'true' && providerOutcome(refund).status !== 'failed') return refund;
  }
  return null;
}
