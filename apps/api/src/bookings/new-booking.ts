import { randomUUID } from 'node:crypto';
import { bookingEventSubject } from '@booking/events';
import type { BookingRequest } from './booking-schemas';
import type { PreparedBooking } from './prepare-booking';

/**
 * The booking row a request makes, before any payment: `held`, priced, bound to its hold. Both
 * ways of writing it (the one statement of a plain booking, the transaction of one with a gift
 * card or a membership) start from this, so they write the same row.
 */
export function newBooking(prepared: PreparedBooking, request: BookingRequest, idempotencyRef: string | undefined) {
  const { hold, terms, price } = prepared;
  return {
    id: randomUUID(),
    tenantId: hold.tenantId,
    experienceId: hold.experienceId,
    venueId: terms.venueId,
    slotId: hold.slotId,
    holdId: hold.id,
    holdExpiresAt: new Date(hold.expiresAt),
    idempotencyRef,
    status: 'held' as const,
    guestCount: request.guest_count,
    notes: request.notes,
    currency: terms.currency,
    ...price,
  };
}

export type NewBooking = ReturnType<typeof newBooking>;

/** The booking.created event of a new booking. */
export function bookingCreatedEvent(booking: NewBooking, customerEmail: string) {
  return {
    tenantId: booking.tenantId,
    name: 'booking.created' as const,
    entityType: 'booking' as const,
    entityId: booking.id,
    fields: { ...bookingEventSubject({ ...booking, customerEmail }), guest_count: booking.guestCount },
  };
}
