import type { Db } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { returnGiftCardPart } from '../gift-cards/return-gift-card-part';
import { changeBookedSeats } from '../holds/booked-seats';
import type { HoldStore } from '../holds/hold-store';
import { lockBooking } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';
import { refundUnderWay } from './refund-under-way';
import type { Operator } from '../operators/api-key-auth';

/**
 * Cancels a held or confirmed booking of the operator's tenant. No refund is issued (refunds are
 * their own operation); the seats go back to the slot. 409 refund_in_progress for a held booking
 * whose late card payment is being refunded.
 */
export async function cancelBooking(deps: { db: Db; holds: HoldStore }, operator: Operator, bookingId: string) {
  const booking = await deps.db.$transaction(async (tx) => {
    const booking = await lockBooking(tx, bookingId, { tenantId: operator.tenantId });
    assertBookingAllows(booking.status, 'cancel');
    // The contract's booking.cancelled says no money goes back: a held booking whose late card
    // payment is being refunded ends with that refund's outcome instead; one whose mismatched
    // payment is being refunded waits for that refund, then stays payable.
    if (booking.status === 'held' && (await refundUnderWay(tx, bookingId))) {
      throw new AppError('refund_in_progress', 'a late card payment of this booking is being refunded');
    }
    if (booking.status === 'confirmed') {
      await changeBookedSeats(tx, deps.holds, booking.slotId, -booking.guestCount);
    } else {
      // Never confirmed, so its gift card part paid for nothing: it goes back on the card. (A
      // confirmed booking's cancellation refunds nothing, as the spec says.)
      await returnGiftCardPart(tx, bookingId);
    }
    await tx.booking.update({ where: { id: bookingId }, data: { status: 'cancelled' } });
    await releaseBookingUses(tx, bookingId);
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'booking.cancelled',
      entityType: 'booking',
      entityId: bookingId,
      fields: { ...bookingEventSubject(booking), cancelled_by_user_id: operator.keyId },
    });
    return booking;
  });
  // A held booking's seats were its hold's; dropping the hold frees them.
  if (booking.status === 'held')
    await deps.holds.releaseAfterCommit(booking.slotId, booking.holdId, booking.guestCount);
  return { booking_id: bookingId, status: 'cancelled' as const };
}
