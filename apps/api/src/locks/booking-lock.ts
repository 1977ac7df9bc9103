import { Prisma, type Tx } from '@booking/db';
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
  /** The membership presented with the booking, whose visits and discount it holds. */
  membershipId: string | null;
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
  membership_id: string | null;
}

/**
 * Locks a booking (FOR UPDATE, the first row lock of every change to a booking) and reads it
 * whole, with its customer's email and whether its experience needs a waiver. Undefined when
 * the scope has no such booking.
 */
export function findBookingForUpdate(
  tx: Tx,
  bookingId: string,
  scope: TenantScope,
): Promise<LockedBooking | undefined> {
  return selectBookingForUpdate(tx, bookingId, scope, Prisma.empty);
}

/**
 * The same lock for background jobs, which must never wait on a request: a booking another
 * transaction holds is skipped (undefined) and found again on a later run.
 */
export function lockBookingUnlessBusy(
  tx: Tx,
  bookingId: string,
  scope: TenantScope,
): Promise<LockedBooking | undefined> {
  return selectBookingForUpdate(tx, bookingId, scope, Prisma.sql`SKIP LOCKED`);
}

/**
 * The row lock takes the bookings table alone: joined to its customer, a lock that waited on a
 * transfer (which changes customer_id) would re-check the join against the old customer and find
 * nothing. The customer's email and the experience's waiver rule are read after the lock, by a
 * statement that sees what the waited-on transaction committed.
 */
async function selectBookingForUpdate(
  tx: Tx,
  bookingId: string,
  scope: TenantScope,
  wait: Prisma.Sql,
): Promise<LockedBooking | undefined> {
  claimLock(tx, 'booking', bookingId);
  const tenantId = scopedTenant(scope);
  const [row] = await tx.$queryRaw<BookingRow[]>`
    SELECT id, tenant_id, status::text AS status, experience_id, venue_id, slot_id, customer_id, hold_id,
           guest_count, unit_price_cents, total_cents, gift_card_applied_cents, currency, review_reason,
           reissued_gift_card_id, checked_in_at, membership_id
    FROM bookings
    WHERE id = ${bookingId}::uuid AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
    FOR UPDATE ${wait}`;
  if (!row) return undefined;
  const [context] = await tx.$queryRaw<{ customer_email: string; requires_waiver: boolean }[]>`
    SELECT (SELECT email FROM customers WHERE id = ${row.customer_id}::uuid) AS customer_email,
           (SELECT requires_waiver FROM experiences WHERE id = ${row.experience_id}::uuid) AS requires_waiver`;
  return bookingOf(row, context!);
}

/** The same lock, for routes: a booking the scope does not have is 404 booking_not_found. */
export async function lockBooking(tx: Tx, bookingId: string, scope: TenantScope): Promise<LockedBooking> {
  const booking = await findBookingForUpdate(tx, bookingId, scope);
  if (!booking) throw new AppError('booking_not_found');
  return booking;
}

function bookingOf(row: BookingRow, context: { customer_email: string; requires_waiver: boolean }): LockedBooking {
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
    membershipId: row.membership_id,
    customerEmail: context.customer_email,
    requiresWaiver: context.requires_waiver,
  };
}
