import type { Tx } from '@booking/db';
import { AppError, type BookingStatus } from '@booking/domain';
import { claimLock } from './lock-order';
import { scopedTenant, type TenantScope } from './tenant-scope';

/** A booking row as every change of it reads it, under its lock. */
export interface LockedBooking {
  id: string;
  tenantId: string;
  status: BookingStatus;
  experienceId: string;
  venueId: string;
  slotId: string;
  customerId: string;
  holdId: string;
  guestCount: number;
  unitPriceCents: number;
  totalCents: number;
  giftCardAppliedCents: number;
  currency: string;
  /** Set when a card payment arrived too late and is being refunded automatically. */
  reviewReason: string | null;
  /** Set when the paid amount was given back as a gift card. */
  reissuedGiftCardId: string | null;
  checkedInAt: Date | null;
  customerEmail: string;
  requiresWaiver: boolean;
}

interface BookingRow {
  id: string;
  tenant_id: string;
  status: BookingStatus;
  experience_id: string;
  venue_id: string;
  slot_id: string;
  customer_id: string;
  hold_id: string;
  guest_count: number;
  unit_price_cents: number;
  total_cents: number;
  gift_card_applied_cents: number;
  currency: string;
  review_reason: string | null;
  reissued_gift_card_id: string | null;
  checked_in_at: Date | null;
  customer_email: string;
  requires_waiver: boolean;
}

/**
 * Locks a booking (FOR UPDATE, the first row lock of every change to a booking) and reads it
 * whole, with its customer's email and whether its experience needs a waiver. Undefined when
 * the scope has no such booking.
 */
export async function findBookingForUpdate(
  tx: Tx,
  bookingId: string,
  scope: TenantScope,
): Promise<LockedBooking | undefined> {
  claimLock(tx, 'booking');
  const tenantId = scopedTenant(scope);
  const [row] = await tx.$queryRaw<BookingRow[]>`
    SELECT b.id, b.tenant_id, b.status::text AS status, b.experience_id, b.venue_id, b.slot_id, b.customer_id,
           b.hold_id, b.guest_count, b.unit_price_cents, b.total_cents, b.gift_card_applied_cents, b.currency,
           b.review_reason, b.reissued_gift_card_id, b.checked_in_at, c.email AS customer_email,
           e.requires_waiver
    FROM bookings b
    JOIN customers c ON c.id = b.customer_id
    JOIN experiences e ON e.id = b.experience_id
    WHERE b.id = ${bookingId}::uuid AND (${tenantId}::uuid IS NULL OR b.tenant_id = ${tenantId}::uuid)
    FOR UPDATE OF b`;
  return row && bookingOf(row);
}

/** The same lock, for routes: a booking the scope does not have is 404 booking_not_found. */
export async function lockBooking(tx: Tx, bookingId: string, scope: TenantScope): Promise<LockedBooking> {
  const booking = await findBookingForUpdate(tx, bookingId, scope);
  if (!booking) throw new AppError('booking_not_found');
  return booking;
}

function bookingOf(row: BookingRow): LockedBooking {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    status: row.status,
    experienceId: row.experience_id,
    venueId: row.venue_id,
    slotId: row.slot_id,
    customerId: row.customer_id,
    holdId: row.hold_id,
    guestCount: row.guest_count,
    unitPriceCents: row.unit_price_cents,
    totalCents: row.total_cents,
    giftCardAppliedCents: row.gift_card_applied_cents,
    currency: row.currency,
    reviewReason: row.review_reason,
    reissuedGiftCardId: row.reissued_gift_card_id,
    checkedInAt: row.checked_in_at && new Date(row.checked_in_at),
    customerEmail: row.customer_email,
    requiresWaiver: row.requires_waiver,
  };
}
