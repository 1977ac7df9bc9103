/** The fields every booking event carries about its booking (see payloads/common.ts). */
export function bookingEventSubject(booking: {
  id: string;
  experienceId: string;
  venueId: string;
  slotId: string;
  customerEmail: string;
}) {
  return {
    booking_id: booking.id,
    experience_id: booking.experienceId,
    venue_id: booking.venueId,
    slot_id: booking.slotId,
    customer_email: booking.customerEmail,
  };
}
