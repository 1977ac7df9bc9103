import { Prisma, type Db } from '@booking/db';
import type { HoldStore } from '../holds/hold-store';
import { ANY_TENANT, lockBookingUnlessBusy } from '../locks';
import { cancelHeldBooking } from './cancel-held-booking';

const BATCH = 100;

/**
 * A held booking whose late card payment is being given back (its automatic refund is due or
 * pending: automatic-refund.ts) is not unpaid: its hold is gone, but cancelling it would say "no
 * refund" while money is on its way back. Its refund's outcome ends it instead (refunded, or
 * cancelled when it failed). A refund still only due (Stripe refused every try) is waited for
 * while Stripe redelivers the payment, three days; after that the booking is cancelled like an
 * unpaid one rather than left held for good, and the payment stays due for its next try. `b` is
 * the booking.
 */
const REFUND_UNDER_WAY = Prisma.sql`(
  EXISTS (SELECT 1 FROM payments p
          WHERE p.booking_id = b.id AND p.refund_due AND p.created_at > now() - interval '3 days')
  OR EXISTS (SELECT 1 FROM refunds r WHERE r.booking_id = b.id AND r.automatic AND r.status = 'pending'))`;

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
      const [underWay] = await tx.$queryRaw<{ yes: boolean }[]>`
        SELECT ${REFUND_UNDER_WAY} AS yes FROM bookings b WHERE b.id = ${id}::uuid`;
      if (underWay?.yes) return null;
      return cancelHeldBooking(tx, booking, 'unpaid_hold_expired');
    });
    if (!release) continue;
    cancelled += 1;
    await deps.holds.releaseAfterCommit(release.slotId, release.holdId, release.seats);
  }
  return cancelled;
}
