import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { checkInToken } from './check-in-token';

/** A booking as operators see it; another tenant's booking does not exist. */
export async function getBooking(deps: { db: Db; config: Config }, tenantId: string, bookingId: string) {
  const booking = await deps.db.booking.findFirst({
    where: { id: bookingId, tenantId },
    include: {
      slot: true,
      experience: { select: { id: true, name: true, slug: true } },
      customer: true,
      addons: true,
      payments: { orderBy: { createdAt: 'asc' } },
    },
  });
  if (!booking) throw new AppError('booking_not_found');
  // A mismatched payment never paid for the booking (and may be in another currency): listed, not counted.
  const paidCents = booking.payments
    .filter((p) => p.status === 'succeeded' && !p.mismatched)
    .reduce((sum, p) => sum + p.amountCents, 0);
  return {
    booking_id: booking.id,
    status: booking.status,
    experience: booking.experience,
    slot: {
      id: booking.slot.id,
      starts_at: booking.slot.startsAt.toISOString(),
      ends_at: booking.slot.endsAt.toISOString(),
    },
    venue_id: booking.venueId,
    guest_count: booking.guestCount,
    customer: {
      id: booking.customer.id,
      email: booking.customer.email,
      first_name: booking.customer.firstName,
      last_name: booking.customer.lastName,
      phone: booking.customer.phone,
    },
    notes: booking.notes,
    currency: booking.currency,
    unit_price_cents: booking.unitPriceCents,
    addons: booking.addons.map((a) => ({ addon_id: a.addonId, qty: a.qty, unit_price_cents: a.unitPriceCents })),
    total_cents: booking.totalCents,
    gift_card_applied_cents: booking.giftCardAppliedCents,
    paid_cents: paidCents,
    payments: booking.payments.map((p) => ({
      id: p.id,
      method: p.method,
      amount_cents: p.amountCents,
      currency: p.currency,
      status: p.status,
      mismatched: p.mismatched,
      provider_reference: p.providerReference,
      created_at: p.createdAt.toISOString(),
    })),
    hold_expires_at: booking.holdExpiresAt.toISOString(),
    review_reason: booking.reviewReason,
    checked_in_at: booking.checkedInAt?.toISOString() ?? null,
    check_in_token: checkInToken(deps.config, booking, booking.slot.endsAt),
    created_at: booking.createdAt.toISOString(),
  };
}
