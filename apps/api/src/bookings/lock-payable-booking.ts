import type { Tx } from '@booking/db';
import type { ConfirmableBooking } from './confirm-booking';

/** What a payment needs to know of the booking it pays, read under the booking's row lock. */
export interface PayableBooking {
  id: string;
  tenant_id: string;
  experience_id: string;
  venue_id: string;
  slot_id: string;
  hold_id: string;
  status: string;
  guest_count: number;
  total_cents: number;
  gift_card_applied_cents: number;
  currency: string;
  review_reason: string | null;
  customer_email: string;
}

/**
 * Locks a booking that a payment is about to settle (the first lock of every payment path:
 * booking, then slot). `tenantId` scopes the lookup for operator routes; the provider's
 * notifications, already authenticated by signature, look up by id alone.
 */
export async function lockPayableBooking(
  tx: Tx,
  bookingId: string,
  tenantId?: string,
): Promise<PayableBooking | undefined> {
  const [row] = await tx.$queryRaw<PayableBooking[]>`
    SELECT b.id, b.tenant_id, b.experience_id, b.venue_id, b.slot_id, b.hold_id, b.status::text AS status,
           b.guest_count, b.total_cents, b.gift_card_applied_cents, b.currency, b.review_reason,
           c.email AS customer_email
    FROM bookings b JOIN customers c ON c.id = b.customer_id
    WHERE b.id = ${bookingId}::uuid AND (${tenantId ?? null}::uuid IS NULL OR b.tenant_id = ${tenantId ?? null}::uuid)
    FOR UPDATE OF b`;
  return row;
}

export function confirmableOf(booking: PayableBooking): ConfirmableBooking {
  return {
    id: booking.id,
    tenantId: booking.tenant_id,
    experienceId: booking.experience_id,
    venueId: booking.venue_id,
    slotId: booking.slot_id,
    guestCount: booking.guest_count,
    totalCents: booking.total_cents,
    currency: booking.currency,
    customerEmail: booking.customer_email,
  };
}
