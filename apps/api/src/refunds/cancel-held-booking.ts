import type { Tx } from '@booking/db';
import { bookingEventSubject, recordEvent, type EventFields } from '@booking/events';
import { returnGiftCardPart } from '../gift-cards/return-gift-card-part';
import type { LockedBooking } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';
import type { HoldRelease } from './refund-bookkeeping';

/** Why the service cancels a held booking whose late card payment it gives back. */
export type RefundCancelReason = Extract<
  EventFields<'booking.cancelled'>['reason'],
  'payment_refund_pending' | 'automatic_refund_failed'
>;

/**
 * A held booking whose late card payment could not buy its seats, and whose money is not back
 * yet (its refund is pending, or failed): it can no longer be confirmed, so it is cancelled now
 * rather than left `held` with no seats. `refunded` waits until money did go back (the contract's
 * "cancelled → refunded"). As any cancelled booking never confirmed, its gift card part goes back
 * on its card; booking.cancelled has no actor and says why. The caller holds the booking lock;
 * returns the hold to drop after the commit (expired already when its seats were sold).
 */
export async function cancelHeldBooking(
  tx: Tx,
  booking: LockedBooking,
  reason: RefundCancelReason,
): Promise<HoldRelease> {
  await returnGiftCardPart(tx, booking.id);
  await tx.booking.update({ where: { id: booking.id }, data: { status: 'cancelled' } });
  await releaseBookingUses(tx, booking.id);
  await recordEvent(tx, {
    tenantId: booking.tenantId,
    name: 'booking.cancelled',
    entityType: 'booking',
    entityId: booking.id,
    fields: { ...bookingEventSubject(booking), cancelled_by_user_id: null, reason },
  });
  return { slotId: booking.slotId, holdId: booking.holdId, seats: booking.guestCount };
}
