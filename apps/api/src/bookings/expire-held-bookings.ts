import type { Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import { returnGiftCardPart } from '../gift-cards/return-gift-card-part';
import type { HoldStore } from '../holds/hold-store';
import { loadBookingEventSubject } from './confirm-booking';

const BATCH = 100;

/**
 * Cancels held bookings nobody paid for: their hold expired more than `graceSeconds` ago (their
 * seats went back then). Any gift card part goes back on its card and booking.cancelled is
 * recorded with no acting user. A card payment that still lands later finds the booking
 * cancelled and is refunded automatically. Rows are claimed with SKIP LOCKED, so every API
 * replica can run this without two cancelling one booking. Returns how many it cancelled.
 */
export async function expireHeldBookings(deps: { db: Db; holds: HoldStore }, graceSeconds: number): Promise<number> {
  const cancelled = await deps.db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<
      { id: string; tenant_id: string; slot_id: string; hold_id: string; guest_count: number }[]
    >`
      SELECT id, tenant_id, slot_id, hold_id, guest_count FROM bookings
      WHERE status = 'held' AND hold_expires_at < now() - make_interval(secs => ${graceSeconds})
      ORDER BY hold_expires_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`;
    for (const booking of rows) {
      await returnGiftCardPart(tx, booking.id);
      await tx.booking.update({ where: { id: booking.id }, data: { status: 'cancelled' } });
      await recordEvent(tx, {
        tenantId: booking.tenant_id,
        name: 'booking.cancelled',
        entityType: 'booking',
        entityId: booking.id,
        fields: {
          ...(await loadBookingEventSubject(tx, booking.id)),
          cancelled_by_user_id: null,
          reason: 'unpaid_hold_expired',
        },
      });
    }
    return rows;
  });
  // Their holds have expired already; this only tidies their records away.
  for (const booking of cancelled)
    await deps.holds.releaseAfterCommit(booking.slot_id, booking.hold_id, booking.guest_count);
  return cancelled.length;
}
