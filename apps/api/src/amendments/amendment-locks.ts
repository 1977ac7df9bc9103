import type { Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import type { ConfirmableBooking } from '../bookings/confirm-booking';

export interface AmendableBooking extends ConfirmableBooking {
  customerId: string;
  holdId: string;
  unitPriceCents: number;
}

/**
 * Locks a booking of the tenant (FOR UPDATE, the first lock of every amendment) and returns it
 * if it is confirmed: only confirmed bookings are amended. Another tenant's booking is not found.
 */
export async function lockAmendableBooking(tx: Tx, tenantId: string, bookingId: string): Promise<AmendableBooking> {
  const [row] = await tx.$queryRaw<
    {
      status: string;
      experience_id: string;
      venue_id: string;
      slot_id: string;
      customer_id: string;
      hold_id: string;
      guest_count: number;
      unit_price_cents: number;
      total_cents: number;
      currency: string;
      email: string;
    }[]
  >`
    SELECT b.status, b.experience_id, b.venue_id, b.slot_id, b.customer_id, b.hold_id, b.guest_count,
           b.unit_price_cents, b.total_cents, b.currency, c.email
    FROM bookings b JOIN customers c ON c.id = b.customer_id
    WHERE b.id = ${bookingId}::uuid AND b.tenant_id = ${tenantId}::uuid
    FOR UPDATE OF b`;
  if (!row) throw new AppError('booking_not_found');
  if (row.status !== 'confirmed') {
    throw new AppError('booking_not_amendable', `only confirmed bookings can be amended; this one is ${row.status}`);
  }
  return {
    id: bookingId,
    tenantId,
    experienceId: row.experience_id,
    venueId: row.venue_id,
    slotId: row.slot_id,
    customerId: row.customer_id,
    holdId: row.hold_id,
    guestCount: row.guest_count,
    unitPriceCents: row.unit_price_cents,
    totalCents: row.total_cents,
    currency: row.currency,
    customerEmail: row.email,
  };
}

export interface LockedSlot {
  id: string;
  experienceId: string;
  startsAt: Date;
  endsAt: Date;
  capacity: number;
  seatsBooked: number;
}

/**
 * Locks the tenant's slots among `slotIds` (FOR NO KEY UPDATE, the lock every change of booked
 * seats takes) in id order, so that two moves between the same slots in opposite directions
 * queue instead of deadlocking. Slots of other tenants are absent from the result.
 */
export async function lockSlots(tx: Tx, tenantId: string, slotIds: string[]): Promise<Map<string, LockedSlot>> {
  const rows = await tx.$queryRaw<
    {
      id: string;
      experience_id: string;
      starts_at: Date;
      ends_at: Date;
      capacity: number;
      seats_booked: number;
    }[]
  >`
    SELECT id, experience_id, starts_at, ends_at, capacity, seats_booked FROM slots
    WHERE id = ANY(${slotIds}::uuid[]) AND tenant_id = ${tenantId}::uuid
    ORDER BY id FOR NO KEY UPDATE`;
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        experienceId: row.experience_id,
        startsAt: new Date(row.starts_at),
        endsAt: new Date(row.ends_at),
        capacity: row.capacity,
        seatsBooked: row.seats_booked,
      },
    ]),
  );
}
