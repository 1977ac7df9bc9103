import { AppError } from './app-error';
import { BOOKING_STATUSES, assertBookingAllows, bookingAllows, type BookingAction } from './booking-status';

describe('booking status rules', () => {
  const table: Record<BookingAction, string[]> = {
    cancel: ['held', 'confirmed'],
    reissue: ['confirmed'],
    checkIn: ['confirmed'],
    amend: ['confirmed'],
    signWaiver: ['held', 'confirmed'],
    pay: ['held'],
    refund: ['held', 'confirmed', 'cancelled'],
    refundKeepingActive: ['confirmed'],
  };

  it.each(Object.entries(table))('when the action is %s, then only %j allow it', (action, allowed) => {
    for (const status of BOOKING_STATUSES) {
      expect(bookingAllows(status, action as BookingAction)).toBe(allowed.includes(status));
    }
  });

  it("when a final status is asked to change, then the refusal is the action's conflict code naming the status", () => {
    const refusal = (() => {
      try {
        assertBookingAllows('refunded', 'cancel');
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: 'booking_not_cancellable', detail: 'the booking is refunded' });
    expect(() => assertBookingAllows('held', 'checkIn')).toThrow(
      expect.objectContaining({ code: 'booking_not_checkable' }),
    );
    expect(() => assertBookingAllows('confirmed', 'amend')).not.toThrow();
  });
});
