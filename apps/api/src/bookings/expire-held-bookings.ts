import type { Db } from '@booking/db';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { returnGiftCardPart } from '../gift-cards/return-gift-card-part';
import type { HoldStore } from '../holds/hold-store';
import { ANY_TENANT, lockBookingUnlessBusy } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';

const BATCH = 100;

/**
 * Cancels held bookings nobody paid for: their hold expired more than `graceSeconds` ago (their
 * seats went back then). Any gift card part goes back on its card and booking.cancelled is
 * recorded with no acting user. A card payment that still lands later finds the booking
 * cancelled and is refunded automatically. One batch per call; the lifecycle worker's
 * `expire-unpaid-bookings` job calls it until a batch cancels none. Returns how many it cancelled.
 *
 * Each booking is cancelled in a transaction of its own, so the money locks of one booking (its
 * payment, then its gift card) are never followed by another booking's lock, which would break
 * the lock order. A booking some request holds right now is skipped, never waited on, and its
 * status is read again under the lock, so overlapping runs (a tick run again after a crash, or
 * a payment that just confirmed it) never cancel it twice or wrongly.
 */
export async function expireHeldBookings(deps: { db: Db; holds: HoldStore }, graceSeconds: number): Promise<number> {
  const candidates = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM bookings
    WHERE status = 'held' AND hold_expires_at < now() - make_interval(secs => ${graceSeconds})
    ORDER BY hold_expires_at LIMIT ${BATCH}`;
  let cancelled = 0;
  for (const { id } of candidates) {
    const booking = await deps.db.$transaction(async (tx) => {
      const booking = await lockBookingUnlessBusy(tx, id, ANY_TENANT);
      if (booking?.status !== 'held') return null;
      await returnGiftCardPart(tx, booking.id);
      await tx.booking.update({ where: { id: booking.id }, data: { status: 'cancelled' } });
      await releaseBookingUses(tx, booking.id);
      await recordEvent(tx, {
        tenantId: booking.tenantId,
        name: 'booking.cancelled',
        entityType: 'booking',
        entityId: booking.id,
        fields: {
          ...bookingEventSubject(booking),
          cancelled_by_user_id: null,
          reason: 'unpaid_hold_expired',
        },
      });
      return booking;
    });
    if (!booking) continue;
    cancelled += 1;
    // Its hold has expired already; this only tidies its record away.
    await deps.holds.releaseAfterCommit(booking.slotId, booking.holdId, booking.guestCount);
  }
  return cancelled;
}
