import type { Db } from '@booking/db';
import { bookingEventSubject, recordEvent } from '@booking/events';
import type Stripe from 'stripe';
import { returnGiftCardPart } from '../gift-cards/return-gift-card-part';
import type { HoldStore } from '../holds/hold-store';
import { ANY_TENANT, findBookingForUpdate, lockPaymentByReference } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';
import { isAlreadyRefunded } from './provider-call';

/**
 * Gives back a card payment that could not buy its seats (or arrived for a booking that was no
 * longer payable). A retry after a crash or a failed call never refunds twice: the provider
 * refuses a second full refund. The booking becomes `refunded` (booking.refunded) only when
 * that payment was all it had: one confirmed meanwhile by other money, say cash at the till,
 * stays confirmed and keeps its seats.
 */
export async function refundForReview(
  deps: { db: Db; holds: HoldStore; stripe: Stripe },
  bookingId: string,
  paymentIntentId: string,
) {
  try {
    // No fixed idempotency key: Stripe keeps a key's first answer even when it is a 500, which
    // would block this refund for good. The SDK keys its own network retries, and a second
    // full refund of the same payment is refused, which is what makes retries safe here.
    await deps.stripe.refunds.create({
      payment_intent: paymentIntentId,
      // `automatic` tells the refund reconciliation this one is booked here.
      metadata: { booking_id: bookingId, automatic: 'true', reason: 'booking could not be confirmed' },
    });
  } catch (error) {
    // Refunded already, by a delivery whose bookkeeping below did not commit or by a concurrent one.
    if (!isAlreadyRefunded(error)) throw error;
  }
  const release = await deps.db.$transaction(async (tx) => {
    // The notification is authenticated by its signature; the booking names its own tenant.
    const booking = await findBookingForUpdate(tx, bookingId, ANY_TENANT);
    const payment = await lockPaymentByReference(tx, paymentIntentId);
    // Redeliveries racing through here all get the same provider refund back; only the first
    // records it, the others find the payment refunded already.
    if (!booking || !payment || payment.status === 'refunded') return null;
    await tx.payment.update({
      where: { id: payment.id },
      // Refunded in full: what the refund routes read as nothing left to refund.
      data: { status: 'refunded', refundedCents: payment.amountCents },
    });
    // A gift card part of an unconfirmed booking goes back on its card below; other money (cash
    // at the till) means the booking is paid some other way and stays as it is.
    const otherMoney = await tx.payment.count({
      where: { bookingId, status: 'succeeded', method: { not: 'gift_card' }, NOT: { id: payment.id } },
    });
    if (booking.status === 'confirmed' || booking.status === 'refunded' || otherMoney > 0) return null;
    await returnGiftCardPart(tx, bookingId);

    await tx.booking.update({ where: { id: bookingId }, data: { status: 'refunded' } });
    await releaseBookingUses(tx, bookingId);
    await recordEvent(tx, {
      tenantId: booking.tenantId,
      name: 'booking.refunded',
      entityType: 'booking',
      entityId: bookingId,
      fields: { ...bookingEventSubject(booking), amount_cents: payment.amountCents },
    });
    return booking.status === 'held' ? booking : null;
  });
  // A held booking's seats were its hold's; dropping the hold frees them.
  if (release) await deps.holds.releaseAfterCommit(release.slotId, release.holdId, release.guestCount);
}
