import type { Tx } from '@booking/db';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { changeBookedSeats } from '../holds/booked-seats';
import type { HoldStore } from '../holds/hold-store';
import { countBookingConfirmed } from '../http/counters';

export interface ConfirmableBooking {
  id: string;
  tenantId: string;
  experienceId: string;
  venueId: string;
  slotId: string;
  guestCount: number;
  totalCents: number;
  currency: string;
  customerEmail: string;
}

/**
 * The confirmation step shared by every way a booking gets paid (full gift card, provider
 * payment, cash). The caller holds the slot row lock and has checked that the seats fit: the
 * seats move from the booking's hold into slots.seats_booked (in one step for Redis, so no replica
 * counts them twice or not at all), the booking becomes `confirmed`, and booking.confirmed is
 * recorded in the same transaction.
 */
export async function confirmBooking(
  tx: Tx,
  holds: HoldStore,
  booking: ConfirmableBooking,
  hold: { id: string; seats: number },
  payment: { method: 'card' | 'gift_card' | 'cash' | 'membership' | 'free'; netPaidCents: number },
): Promise<void> {
  await tx.booking.update({ where: { id: booking.id }, data: { status: 'confirmed' } });
  await changeBookedSeats(tx, holds, booking.slotId, booking.guestCount, hold);
  await recordEvent(tx, {
    tenantId: booking.tenantId,
    name: 'booking.confirmed',
    entityType: 'booking',
    entityId: booking.id,
    fields: {
      ...bookingEventSubject(booking),
      // Every booking is its own order here; order_id names it for receivers that group by order.
      order_id: booking.id,
      is_primary_booking: true,
      charge_amount_cents: booking.totalCents,
      currency: booking.currency,
      method: payment.method,
      net_paid_cents: payment.netPaidCents,
    },
  });
  // Counted inside the transaction, the one step every confirmation shares: a transaction that
  // then fails to commit (rare: the connection lost at COMMIT) is counted all the same.
  countBookingConfirmed(payment.method);
}
