import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { signToken } from '@booking/signing';
import { manageToken, waiverUrl } from './booking-links';
import type { BookingRequest, BookingResponse } from './booking-schemas';
import { normaliseEmail } from '../customers/customer-email';

/** What POST /api/bookings answers about a booking it created. */
export interface CreatedBooking {
  id: string;
  tenantId: string;
  customerId: string;
  totalCents: number;
  currency: string;
  giftCardAppliedCents: number;
  /** Taken off the total by a member discount (0 without one). */
  memberDiscountCents: number;
  /** A gift card covered the whole total, so the booking was confirmed at once. */
  paymentComplete: boolean;
  requiresWaiver: boolean;
  slot: { endsAt: Date };
}

/** The answer to the request that created `booking`; its tokens are signed afresh each time. */
export function bookingAnswer(config: Config, booking: CreatedBooking): BookingResponse {
  return {
    booking_id: booking.id,
    booking_token: signToken(config.tokenSigningSecret, 'booking', {
      subject: booking.id,
      tenantId: booking.tenantId,
      ttlSeconds: config.bookingTokenTtlSeconds,
    }),
    waiver_url: booking.requiresWaiver ? waiverUrl(config, booking, booking.slot.endsAt) : null,
    manage_token: manageToken(config, booking, booking.slot.endsAt),
    status: booking.paymentComplete ? 'confirmed' : 'held',
    total_cents: booking.totalCents,
    currency: booking.currency,
    gift_card_applied_cents: booking.giftCardAppliedCents,
    member_discount_cents: booking.memberDiscountCents,
    payment_complete: booking.paymentComplete,
  };
}

/**
 * The answer of an earlier run of this very request whose booking committed but whose answer
 * never reached the client (the process died in between, or Redis lost the stored answer).
 * Found through the Idempotency-Key's reference stored with the booking, and only while the
 * booking still belongs to the customer who asked: a transferred booking is no longer theirs.
 */
export async function committedBookingAnswer(
  deps: { db: Db; config: Config },
  request: BookingRequest,
  idempotencyRef: string,
): Promise<BookingResponse | null> {
  const booking = await deps.db.booking.findUnique({
    where: { holdId: request.hold_id },
    include: {
      customer: { select: { email: true } },
      experience: { select: { requiresWaiver: true } },
      slot: { select: { endsAt: true } },
    },
  });
  if (!booking || booking.idempotencyRef !== idempotencyRef) return null;
  if (booking.customer.email !== normaliseEmail(request.customer.email)) return null;
  return bookingAnswer(deps.config, {
    ...booking,
    // Nothing left to pay: a gift card covered it, or its total was zero (a member discount, or free).
    paymentComplete:
      (booking.giftCardId !== null && booking.giftCardAppliedCents === booking.totalCents) || booking.totalCents === 0,
    requiresWaiver: booking.experience.requiresWaiver,
  });
}
