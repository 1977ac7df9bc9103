import type { Tx } from '@booking/db';
import type Stripe from 'stripe';
import { ANY_TENANT, lockBooking, lockPaymentByReference, type LockedBooking } from '../locks';
import { AUTOMATIC_REFUND_FAILED, bookFailedAutomaticRefund } from './automatic-refund-failed';
import { providerOutcome } from './create-refund';
import { bookSucceededRefund, PAYMENT_REFUND_PENDING, type HoldRelease, type SettleDeps } from './refund-bookkeeping';

/** What an automatic refund says, to the provider (metadata) and in its refund row. */
export const AUTOMATIC_REFUND_REASON = 'booking could not be confirmed';

export type AutomaticRecording =
  /** Recorded now as the payment's automatic refund; the hold to drop after the commit, if any. */
  | { kind: 'recorded'; release: HoldRelease | null }
  /** A refund row has this provider id already: recorded by whoever came first. */
  | { kind: 'known' }
  /**
   * The payment is not due an automatic refund (any more): its automatic refund was recorded
   * with another provider refund, so this one was made behind it (a stalled redelivery asked
   * after that one failed). Not recorded here; see reconcile-provider-refunds.
   */
  | { kind: 'not_due' };

/**
 * Records a provider refund tagged `metadata.automatic` as the automatic refund of a card payment
 * that could not buy its seats (handle-payment-succeeded set its refund_due), with the status the
 * provider gives it, exactly once: the payment path (refund-for-review) and the refund
 * notifications both call this, and whichever comes first records it. Under the booking lock a
 * refund row with its provider id means it is known; under the payment lock refund_due is checked
 * again, so a refund asked for after the payment's automatic refund was recorded never replaces it.
 *
 * Recording clears refund_due (asked and answered). Then, as for any refund: succeeded,
 * bookSucceededRefund (refund.created; a booking left with no paying money becomes `refunded`
 * once every card payment's money is back); pending, its amount is reserved until a notification
 * settles it (settleRefund), which applies that same rule then; failed, the money stays
 * refundable and the booking is flagged and a held one cancelled (bookFailedAutomaticRefund).
 * A `held` booking that is not refunded now stays `held` (awaitRefund) until its refund's outcome:
 * cancelling it would send booking.cancelled, which says no money goes back. A cancelled booking
 * stays cancelled until then, and one confirmed by other money (cash) stays confirmed with its
 * seats.
 *
 * A mismatched payment (it did not cover what its held booking owed) never paid for the booking:
 * its refund, whatever its outcome, leaves the booking's status and hold alone, so a held one
 * stays payable (bookSucceededRefund and bookFailedAutomaticRefund check the payment).
 */
export async function recordAutomaticRefund(
  tx: Tx,
  deps: SettleDeps,
  paymentIntentId: string,
  providerRefund: Stripe.Refund,
): Promise<AutomaticRecording> {
  // Read to find the booking to lock first (the house lock order); read again under its lock.
  const known = await tx.payment.findUnique({ where: { providerReference: paymentIntentId } });
  if (!known) return { kind: 'not_due' };
  // The notification is authenticated by its signature; the booking names its own tenant.
  const booking = await lockBooking(tx, known.bookingId, ANY_TENANT);
  // Every recording holds this booking lock: a row committed before it is seen here.
  if (await tx.refund.findUnique({ where: { providerRefundId: providerRefund.id } })) return { kind: 'known' };
  const payment = await lockPaymentByReference(tx, paymentIntentId);
  if (!payment?.refundDue) return { kind: 'not_due' };

  const { status } = providerOutcome(providerRefund);
  const refund = await tx.refund.create({
    data: {
      tenantId: booking.tenantId,
      bookingId: booking.id,
      paymentId: payment.id,
      providerRefundId: providerRefund.id,
      amountCents: providerRefund.amount,
      reason: AUTOMATIC_REFUND_REASON,
      status,
      automatic: true,
    },
  });
  await tx.payment.update({
    where: { id: payment.id },
    // A pending refund reserves its amount as any refund does; a succeeded one is counted by
    // bookSucceededRefund, a failed one gave nothing back.
    data: { refundDue: false, ...(status === 'pending' && { refundedCents: { increment: refund.amountCents } }) },
  });
  if (status === 'failed') {
    return { kind: 'recorded', release: await bookFailedAutomaticRefund(tx, booking, refund, deps.logger) };
  }
  if (status === 'succeeded') {
    const release = await bookSucceededRefund(tx, deps.holds, booking, {
      ...refund,
      raiseRefundedCentsBy: refund.amountCents,
    });
    // bookSucceededRefund drops a hold only for a held booking it made refunded.
    if (release || booking.status !== 'held') return { kind: 'recorded', release };
  }
  // Pending, or succeeded while another late payment's money is still on its way back. A held
  // booking a mismatched payment did not pay for waits for nothing: it keeps its hold.
  const release = booking.status === 'held' && !payment.mismatched ? await awaitRefund(tx, booking) : null;
  return { kind: 'recorded', release };
}

/**
 * A held booking whose late card payment's money is on its way back: it can no longer be
 * confirmed, but it is neither cancelled (no refund) nor refunded (not back yet). It stays `held`,
 * flagged so operators see why, and the unpaid-booking sweep leaves it alone while its automatic
 * refund is pending (expire-held-bookings). Its hold goes now (after the commit), so its seats are
 * free; its gift card part waits for the outcome, which returns it once: refunded
 * (bookSucceededRefund) or cancelled (bookFailedAutomaticRefund).
 */
async function awaitRefund(tx: Tx, booking: LockedBooking): Promise<HoldRelease> {
  // A failed automatic refund's flag stays until that money is back (refund-bookkeeping): it is
  // the one telling an operator that money is still to give back.
  if (booking.reviewReason !== AUTOMATIC_REFUND_FAILED) {
    await tx.booking.update({ where: { id: booking.id }, data: { reviewReason: PAYMENT_REFUND_PENDING } });
  }
  return { slotId: booking.slotId, holdId: booking.holdId, seats: booking.guestCount };
}
