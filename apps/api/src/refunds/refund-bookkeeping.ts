import type { Tx } from '@booking/db';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { changeBookedSeats } from '../holds/booked-seats';
import type { HoldStore } from '../holds/hold-store';
import { lockRefund, type LockedBooking } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';

/** A hold to drop once the transaction committed: a held booking that became refunded. */
export interface HoldRelease {
  slotId: string;
  holdId: string;
  seats: number;
}

export type FinalOutcome = { status: 'succeeded' | 'failed'; providerRefundId?: string };

/**
 * Records the provider's final answer for a pending refund, exactly once: the refund row is
 * locked and only a pending refund moves. The caller holds the booking lock. A failed refund
 * gives its amount back to what is refundable; a succeeded one is booked (see bookSucceededRefund).
 */
export async function settleRefund(
  tx: Tx,
  holds: HoldStore,
  booking: LockedBooking,
  refundId: string,
  outcome: FinalOutcome,
): Promise<{ settled: boolean; release: HoldRelease | null }> {
  const refund = await lockRefund(tx, refundId);
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
    return { settled: true, release: null };
  }
  const release = await bookSucceededRefund(tx, holds, booking, { ...refund, raiseRefundedCentsBy: 0 });
  return { settled: true, release };
}

/**
 * The bookkeeping of a refund whose status was just recorded as succeeded, in the caller's
 * transaction (booking row locked): refund.created; refund.partial_no_cancel in the
 * keep-booking-active flow; otherwise, once the card payments are refunded in full, the booking
 * becomes refunded, its seats go back and booking.refunded is recorded. Gift card parts are not
 * refundable through the provider and do not count as "paid" here.
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
    select: { id: true, amountCents: true, status: true },
  });
  const succeeded = await tx.refund.groupBy({
    by: ['paymentId'],
    where: { bookingId: booking.id, status: 'succeeded' },
    _sum: { amountCents: true },
  });
  const succeededOf = (paymentId: string) =>
    succeeded.find((row) => row.paymentId === paymentId)?._sum.amountCents ?? 0;
  const refundTotalCents = succeeded.reduce((sum, row) => sum + (row._sum.amountCents ?? 0), 0);
  // A payment refunded automatically (refund-for-review) is refunded in full without refund rows.
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
  if (refund.keepBookingActive) {
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
  } else if (
    booking.status !== 'refunded' &&
    cardPayments.every(fullyRefunded) &&
    !(await paidOtherwise(tx, booking.id))
  ) {
    // Seats go back: a confirmed booking's are in seats_booked (the UPDATE takes the slot row
    // lock); a held booking's are its hold's, dropped after the commit. A cancelled booking gave
    // them back already.
    if (booking.status === 'confirmed') await changeBookedSeats(tx, holds, booking.slotId, -booking.guestCount);
    if (booking.status === 'held') {
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
 * paid" and keeps its status; an operator can reissue that part as a gift card.
 */
async function paidOtherwise(tx: Tx, bookingId: string): Promise<boolean> {
  return (await tx.payment.count({ where: { bookingId, status: 'succeeded', method: { not: 'card' } } })) > 0;
}
