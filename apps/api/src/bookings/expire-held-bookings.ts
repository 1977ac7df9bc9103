import type { Db } from '@booking/db';
import type { HoldStore } from '../holds/hold-store';
import { ANY_TENANT, lockBookingUnlessBusy } from '../locks';
import { cancelHeldBooking } from './cancel-held-booking';
import { REFUND_UNDER_WAY, refundUnderWay } from './refund-under-way';

const BATCH = 100;

/**
 * Cancels held bookings nobody paid for: their hold expired more than `graceSeconds` ago (their
 * seats went back then). Any gift card part goes back on its card and booking.cancelled is
 * recorded with no acting user (cancelHeldBooking). A card payment that still lands later finds
 * the booking cancelled and is refunded automatically. One batch per call; the lifecycle worker's
 * `expire-unpaid-bookings` job calls it until a batch cancels none. Returns how many it cancelled.
 *
 * Each booking is cancelled in a transaction of its own, so the money locks of one booking (its
 * payment, then its gift card) are never followed by another booking's lock, which would break
 * the lock order. A booking some request holds right now is skipped, never waited on, and its
 * status and refunds are read again under the lock, so overlapping runs (a tick run again after
 * a crash, a payment that just confirmed it, or one whose automatic refund was just recorded)
 * never cancel it twice or wrongly.
 */
export async function expireHeldBookings(deps: { db: Db; holds: HoldStore }, graceSeconds: number): Promise<number> {
  const candidates = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT b.id FROM bookings b
    WHERE b.status = 'held' AND b.hold_expires_at < now() - make_interval(secs => ${graceSeconds})
      AND NOT ${REFUND_UNDER_WAY}
    ORDER BY b.hold_expires_at LIMIT ${BATCH}`;
  let cancelled = 0;
  for (const { id } of candidates) {
    const release = await deps.db.$transaction(async (tx) => {
      const booking = await lockBookingUnlessBusy(tx, id, ANY_TENANT);
      if (booking?.status !== 'held') return null;
      if (await refundUnderWay(tx, id)) return null;
      return cancelHeldBooking(tx, booking, 'unpaid_hold_expired');
    });
    if (!release) continue;
    cancelled += 1;
    await deps.holds.releaseAfterCommit(release.slotId, release.holdId, release.seats);
  }
  return cancelled;
}
