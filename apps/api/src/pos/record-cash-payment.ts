import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { confirmBooking } from '../bookings/confirm-booking';
import { confirmableOf, lockPayableBooking } from '../bookings/lock-payable-booking';
import { lockSlotAndCheckSeats } from '../bookings/lock-slot';
import type { HoldStore } from '../holds/hold-store';
import type { Operator } from '../operators/api-key-auth';
import { lockShift } from './close-shift';
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
    await lockShift(tx, operator.tenantId, shiftId, 'share');
    const booking = await lockPayableBooking(tx, request.booking_id, operator.tenantId);
    if (!booking) throw new AppError('booking_not_found');
    if (booking.status !== 'held') throw new AppError('booking_not_payable', `the booking is ${booking.status}`);
    // A card payment for it arrived too late and is being refunded: taking cash too would need
    // the same review.
    if (booking.review_reason)
      throw new AppError('booking_not_payable', 'a card payment of this booking is under review');
    const dueCents = booking.total_cents - booking.gift_card_applied_cents;
    if (request.amount_cents !== dueCents) {
      throw new AppError('payment_amount_mismatch', { amount_due_cents: dueCents, currency: booking.currency });
    }

    const fits = await lockSlotAndCheckSeats(tx, deps.holds, {
      slotId: booking.slot_id,
      seats: booking.guest_count,
      exceptHoldId: booking.hold_id,
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
    await confirmBooking(tx, confirmableOf(booking), {
      method: 'cash',
      netPaidCents: request.amount_cents + booking.gift_card_applied_cents,
    });
    // The seats now count in seats_booked; still under the slot lock, the hold stops counting
    // them, so no replica ever counts them twice.
    await deps.holds.release(booking.slot_id, booking.hold_id, booking.guest_count);
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
