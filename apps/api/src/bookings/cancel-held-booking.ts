import type { Tx } from '@booking/db';
import { bookingEventSubject, recordEvent, type EventFields } from '@booking/events';
import { returnGiftCardPart } from '../gift-cards/return-gift-card-part';
import type { LockedBooking } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';
import type { HoldRelease } from '../refunds/refund-bookkeeping';

/** Why the service cancels a held booking: nobody paid, or its late card payment could not go back. */
export type HeldCancelReason = NonNullable<EventFields<'booking.cancelled'>['reason']>;

/**
 * The service cancels a `held` booking that will never be confirmed and whose customer got no
 * money back: its hold ran out unpaid (expire-held-bookings), or the automatic refund of its late
 * card payment failed (automatic-refund-failed). Never confirmed, so its gift card part goes back
 * on its card and its membership uses are released; booking.cancelled has no actor and says why
 * (the contract's "implies no refund"). The caller holds the booking lock; returns the hold to drop
 * after the commit (its seats went back when it expired; this tidies its record away).
 */
export async function cancelHeldBooking(
  tx: Tx,
  booking: LockedBooking,
  reason: HeldCancelReason,
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
