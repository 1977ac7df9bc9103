import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import type { HoldStore } from '../holds/hold-store';
import { AUTOMATIC_REFUND_REASON, recordAutomaticRefund } from '../refunds/automatic-refund';
import { refundInFull } from './refund-in-full';

type Deps = { db: Db; holds: HoldStore; stripe: Stripe; logger?: Logger };

/**
 * Gives back a card payment that could not buy its seats (or arrived for a booking that was no
 * longer payable, or did not cover what the booking owed): asks the provider to refund it in
 * full, then records its answer as the payment's `automatic` refund (recordAutomaticRefund, which
 * also settles the booking, except for a mismatched payment, which never paid for it, and clears
 * the payment's refund_due).
 *
 * A retry after a crash or a failed call never refunds twice: the provider refuses a second full
 * refund, and the refund it made is then looked up and recorded once (its id is unique). A
 * delivery that asked after the payment's automatic refund was recorded (it stalled while another
 * one's refund failed, then got a second refund made) records nothing: that refund is logged, and
 * the refund notifications record it as a refund made in Stripe.
 */
export async function refundForReview(deps: Deps, bookingId: string, paymentIntentId: string): Promise<void> {
  const providerRefund = await refundInFull(
    deps.stripe,
    paymentIntentId,
    // `automatic` lets the refund notifications tell it from a dashboard refund.
    { booking_id: bookingId, automatic: 'true', reason: AUTOMATIC_REFUND_REASON },
    (refund) => refund.metadata?.automatic === 'true',
  );
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
