import type { Db, Tx } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { confirmBooking } from '../bookings/confirm-booking';
import { lockSlotAndReserveSeats } from '../bookings/lock-slot';
import type { HoldStore } from '../holds/hold-store';
import { PAYMENT_AMOUNT_MISMATCH } from '../payments/payment-covers-booking';
import { AUTOMATIC_REFUND_FAILED } from '../refunds/automatic-refund-failed';
import { lockBooking, lockOpenShift } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { CashPaymentRequest, CashPaymentResponse } from './pos-schemas';

/**
 * Cash taken at the till pays a held booking in full and confirms it, in one transaction with
 * the payment. Locks: the shift (shared, so it cannot close meanwhile), then the booking, then
 * the slot, where the seats are checked again as for a card payment: a held booking past its
 * hold keeps nothing, and if its seats were sold meanwhile nothing is recorded (409).
 */
export async function recordCashPayment(
  deps: { db: Db; holds: HoldStore },
  operator: Operator,
  shiftId: string,
  request: CashPaymentRequest,
): Promise<CashPaymentResponse> {
  return deps.db.$transaction(async (tx) => {
    await lockOpenShift(tx, operator.tenantId, shiftId, 'share');
    const booking = await lockBooking(tx, request.booking_id, { tenantId: operator.tenantId });
    assertBookingAllows(booking.status, 'pay');
    // A card payment for it arrived too late and is being refunded: taking cash too would need
    // the same review. One that did not cover what the booking owes paid for nothing, whatever
    // became of its refund: the booking is still to be paid, in cash as well.
    if (booking.reviewReason && !(await onlyMismatchedUnderReview(tx, booking.id, booking.reviewReason)))
      throw new AppError('booking_not_payable', 'a card payment of this booking is under review');
    const dueCents = booking.totalCents - booking.giftCardAppliedCents;
    if (request.amount_cents !== dueCents) {
      throw new AppError('payment_amount_mismatch', { amount_due_cents: dueCents, currency: booking.currency });
    }

    const fits = await lockSlotAndReserveSeats(tx, deps.holds, {
      tenantId: operator.tenantId,
      slotId: booking.slotId,
      seats: booking.guestCount,
      exceptHoldId: booking.holdId,
    });
    if (!fits) throw new AppError('capacity_exceeded', 'the seats of this booking are no longer available');

    const payment = await tx.payment.create({
      data: {
        tenantId: operator.tenantId,
        bookingId: booking.id,
        method: 'cash',
        amountCents: request.amount_cents,
        currency: booking.currency,
        status: 'succeeded',
        shiftId,
      },
    });
    await confirmBooking(
      tx,
      deps.holds,
      booking,
      { id: booking.holdId, seats: booking.guestCount },
      { method: 'cash', netPaidCents: request.amount_cents + booking.giftCardAppliedCents },
    );
    return {
      booking_id: booking.id,
      status: 'confirmed',
      payment_id: payment.id,
      shift_id: shiftId,
      amount_cents: payment.amountCents,
      currency: booking.currency,
    };
  });
}

/**
 * Whether the booking's flag is only about mismatched payments: the mismatch itself, or an
 * automatic refund that failed when every failed automatic refund of the booking is a mismatched
 * payment's.
 */
async function onlyMismatchedUnderReview(tx: Tx, bookingId: string, reviewReason: string): Promise<boolean> {
  if (reviewReason === PAYMENT_AMOUNT_MISMATCH) return true;
  if (reviewReason !== AUTOMATIC_REFUND_FAILED) return false;
  const others = await tx.refund.count({
    where: { bookingId, automatic: true, status: 'failed', payment: { mismatched: false } },
  });
  return others === 0;
}
