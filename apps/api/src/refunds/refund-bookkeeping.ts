import type { Tx } from '@booking/db';
import { bookingEventSubject, recordEvent } from '@booking/events';
import type { Logger } from '@booking/logging';
import { returnGiftCardPart } from '../gift-cards/return-gift-card-part';
import { changeBookedSeats } from '../holds/booked-seats';
import type { HoldStore } from '../holds/hold-store';
import { lockRefund, type LockedBooking } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';
import {
  AUTOMATIC_REFUND_FAILED,
  bookFailedAutomaticRefund,
  bookReversedAutomaticRefund,
} from './automatic-refund-failed';

/** review_reason of a reissued booking whose card money also came back through the provider. */
export const REFUNDED_AFTER_REISSUE = 'refunded_after_reissue';

/**
 * review_reason of a held booking whose late card payment's automatic refund is pending
 * (automatic-refund.ts); cleared when the booking becomes refunded, replaced when the refund fails.
 */
export const PAYMENT_REFUND_PENDING = 'payment_refund_pending';

/** A hold to drop once the transaction committed: a held booking that became refunded or cancelled. */
export interface HoldRelease {
  slotId: string;
  holdId: string;
  seats: number;
}

export type FinalOutcome = { status: 'succeeded' | 'failed'; providerRefundId?: string };

/** What settling a refund needs besides the transaction: the seats, and a log for failures. */
export interface SettleDeps {
  holds: HoldStore;
  logger?: Logger;
}

/**
 * Records the provider's final answer for a pending refund, exactly once: the refund row is
 * locked and only a pending refund moves. The caller holds the booking lock. A failed refund
 * gives its amount back to what is refundable (an automatic one also flags its booking, see
 * bookFailedAutomaticRefund); a succeeded one is booked (see bookSucceededRefund). The one other
 * move: an automatic refund reported failed after it succeeded (bookReversedAutomaticRefund).
 */
export async function settleRefund(
  tx: Tx,
  deps: SettleDeps,
  booking: LockedBooking,
  refundId: string,
  outcome: FinalOutcome,
): Promise<{ settled: boolean; release: HoldRelease | null }> {
  const refund = await lockRefund(tx, refundId);
  if (refund?.automatic && refund.status === 'succeeded' && outcome.status === 'failed') {
    await bookReversedAutomaticRefund(tx, booking, refund, deps.logger);
    return { settled: true, release: null };
  }
  if (!refund || refund.status !== 'pending') return { settled: false, release: null };

  await tx.refund.update({
    where: { id: refund.id },
    data: {
      status: outcome.status,
      ...(outcome.providerRefundId && { providerRefundId: outcome.providerRefundId }),
      // A failed refund paid nothing out: a retry of its request may try again.
      ...(outcome.status === 'failed' && { idempotencyRef: null }),
    },
  });
  if (outcome.status === 'failed') {
    // Kept as failed for the audit trail; its amount is refundable again.
    await tx.payment.update({
      where: { id: refund.paymentId },
      data: { refundedCents: { decrement: refund.amountCents } },
    });
    const release = refund.automatic ? await bookFailedAutomaticRefund(tx, booking, refund, deps.logger) : null;
    return { settled: true, release };
  }
  const release = await bookSucceededRefund(tx, deps.holds, booking, { ...refund, raiseRefundedCentsBy: 0 });
  return { settled: true, release };
}

/**
 * The bookkeeping of a refund whose status was just recorded as succeeded, in the caller's
 * transaction (booking row locked): refund.created; refund.partial_no_cancel in the
 * keep-booking-active flow; otherwise, once the card payments are refunded in full, the booking
 * becomes refunded, its seats go back and booking.refunded is recorded. Automatic refunds
 * (automatic-refund.ts) follow the same rule: a booking left with no paying money by them
 * becomes refunded once their money went back, not before. The review_reason waiting for that
 * money (payment_refund_pending, automatic_refund_failed) is cleared once it is back. A
 * mismatched payment (it did not cover what its held booking owed) never paid for the booking:
 * its refund changes nothing about the booking's status or seats, and it counts neither as the
 * booking's card money nor in the booking's refunded total.
 */
export async function bookSucceededRefund(
  tx: Tx,
  holds: HoldStore,
  booking: LockedBooking,
  refund: {
    id: string;
    paymentId: string;
    amountCents: number;
    reason: string | null;
    keepBookingActive: boolean;
    /** Refunds the provider made without us (dashboard) were never reserved in refunded_cents. */
    raiseRefundedCentsBy: number;
  },
): Promise<HoldRelease | null> {
  const payment = await tx.payment.findUniqueOrThrow({ where: { id: refund.paymentId } });
  const cardPayments = await tx.payment.findMany({
    where: { bookingId: booking.id, method: 'card', providerReference: { not: null } },
    select: { id: true, amountCents: true, status: true, mismatched: true },
  });
  const succeeded = await tx.refund.groupBy({
    by: ['paymentId'],
    where: { bookingId: booking.id, status: 'succeeded' },
    _sum: { amountCents: true },
  });
  const succeededOf = (paymentId: string) =>
    succeeded.find((row) => row.paymentId === paymentId)?._sum.amountCents ?? 0;
  const payingCardPayments = cardPayments.filter((p) => !p.mismatched);
  const refundTotalCents = payingCardPayments.reduce((sum, p) => sum + succeededOf(p.id), 0);
  // Automatic refunds made before they were recorded as refunds left only the payment `refunded`.
  const fullyRefunded = (p: { id: string; amountCents: number; status: string }) =>
    p.status === 'refunded' || succeededOf(p.id) >= p.amountCents;

  const paymentIntentId = payment.providerReference!;
  await recordEvent(tx, {
    tenantId: booking.tenantId,
    name: 'refund.created',
    entityType: 'booking',
    entityId: booking.id,
    fields: {
      refund_id: refund.id,
      payment_intent_id: paymentIntentId,
      amount_cents: refund.amountCents,
      reason: refund.reason,
      status: 'succeeded',
    },
  });

  let release: HoldRelease | null = null;
  let becameRefunded = false;
  if (payment.mismatched) {
    // Its money going back leaves the booking as it was: held and payable, or paid since.
  } else if (refund.keepBookingActive) {
    await recordEvent(tx, {
      tenantId: booking.tenantId,
      name: 'refund.partial_no_cancel',
      entityType: 'booking',
      entityId: booking.id,
      fields: {
        refund_id: refund.id,
        payment_intent_id: paymentIntentId,
        booking_id: booking.id,
        amount_cents: refund.amountCents,
        refund_total_cents: refundTotalCents,
        reason: refund.reason,
        status: 'succeeded',
      },
    });
  } else if (booking.reissuedGiftCardId !== null) {
    // Its paid amount went onto a new gift card, and card money has now come back as well (a
    // refund made in Stripe's dashboard: our refund routes refuse a reissued booking), so the
    // customer holds both. The booking stays as the reissue left it, and is flagged: an operator
    // takes the value back off the card, or accepts the loss.
    await tx.booking.update({ where: { id: booking.id }, data: { reviewReason: REFUNDED_AFTER_REISSUE } });
  } else if (
    booking.status !== 'refunded' &&
    payingCardPayments.every(fullyRefunded) &&
    !(await paidOtherwise(tx, booking))
  ) {
    becameRefunded = true;
    // Seats go back: a confirmed booking's are in seats_booked (the UPDATE takes the slot row
    // lock); a held booking's are its hold's, dropped after the commit. A cancelled booking gave
    // them back already.
    if (booking.status === 'confirmed') await changeBookedSeats(tx, holds, booking.slotId, -booking.guestCount);
    if (booking.status === 'held') {
      // Never confirmed: its gift card part paid for nothing and goes back on its card, as when a
      // held booking is cancelled.
      await returnGiftCardPart(tx, booking.id);
      release = { slotId: booking.slotId, holdId: booking.holdId, seats: booking.guestCount };
    }
    await tx.booking.update({ where: { id: booking.id }, data: { status: 'refunded' } });
    await releaseBookingUses(tx, booking.id);
    await recordEvent(tx, {
      tenantId: booking.tenantId,
      name: 'booking.refunded',
      entityType: 'booking',
      entityId: booking.id,
      fields: { ...bookingEventSubject(booking), amount_cents: refundTotalCents },
    });
  }

  // The flags that wait for money to go back are resolved once it did: a held booking's pending
  // automatic refund, when the booking becomes refunded; an automatic refund that failed, when its
  // payment's money is back (an operator's refund, or one made in the dashboard). A reissued
  // booking was flagged just above.
  // A mismatched payment's failed refund is not repaid by the booking's own money going back.
  const failedRepaid = () => failedAutomaticRefundsRepaid(tx, booking.id, cardPayments.filter(fullyRefunded));
  // A reissue took the booking's own money onto a gift card; a mismatched payment's is not part of it.
  const reissueAside = booking.reissuedGiftCardId === null || payment.mismatched;
  const flagResolved = becameRefunded
    ? booking.reviewReason === PAYMENT_REFUND_PENDING ||
      (booking.reviewReason === AUTOMATIC_REFUND_FAILED && (await failedRepaid()))
    : booking.reviewReason === AUTOMATIC_REFUND_FAILED && reissueAside && (await failedRepaid());
  if (flagResolved) await tx.booking.update({ where: { id: booking.id }, data: { reviewReason: null } });

  const paymentDone = fullyRefunded({ ...payment, status: payment.status });
  if (refund.raiseRefundedCentsBy > 0 || (paymentDone && payment.status !== 'refunded')) {
    await tx.payment.update({
      where: { id: payment.id },
      data: {
        refundedCents: { increment: refund.raiseRefundedCentsBy },
        ...(paymentDone && { status: 'refunded' as const }),
      },
    });
  }
  return release;
}

/**
 * Whether money other than cards still pays for the booking (a gift card part, cash at the
 * till): those cannot go back through the provider, so the booking is not "left with nothing
 * paid" and keeps its status; an operator can reissue that part as a gift card. A held booking's
 * gift card part does not count: the booking was never confirmed, so that part goes back on its
 * card when it ends (and cash would have confirmed it).
 */
async function paidOtherwise(tx: Tx, booking: LockedBooking): Promise<boolean> {
  if (booking.status === 'held') return false;
  const count = await tx.payment.count({
    where: { bookingId: booking.id, status: 'succeeded', method: { not: 'card' } },
  });
  return count > 0;
}

/** Whether every card payment whose automatic refund failed has been given back in full since. */
async function failedAutomaticRefundsRepaid(tx: Tx, bookingId: string, repaid: { id: string }[]): Promise<boolean> {
  const failed = await tx.refund.findMany({
    where: { bookingId, automatic: true, status: 'failed' },
    select: { paymentId: true },
  });
  return failed.every((refund) => repaid.some((payment) => payment.id === refund.paymentId));
}
