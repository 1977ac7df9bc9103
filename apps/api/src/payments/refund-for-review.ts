import type { Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import type Stripe from 'stripe';
import type { HoldStore } from '../holds/hold-store';

/**
 * Gives back a card payment that could not buy its seats, then records the booking as refunded
 * (booking.refunded). The provider call is idempotent per PaymentIntent, so a retry after a
 * crash never refunds twice.
 */
export async function refundForReview(deps: { db: Db; holds: HoldStore; stripe: Stripe }, bookingId: string, paymentIntentId: string) {
  await deps.stripe.refunds.create(
    { payment_intent: paymentIntentId, metadata: { booking_id: bookingId, reason: 'automatic: booking could not be confirmed' } },
    { idempotencyKey: `booking-${bookingId}-auto-refund-${paymentIntentId}` },
  );
  const booking = await deps.db.$transaction(async (tx) => {
    // Redeliveries racing through here all get the same provider refund back; only the first
    // records it (one booking.refunded), the others find the payment already refunded.
    const [locked] = await tx.$queryRaw<{ status: string }[]>`
      SELECT status FROM payments WHERE provider_reference = ${paymentIntentId} FOR UPDATE`;
    if (!locked || locked.status === 'refunded') return null;
    const payment = await tx.payment.update({ where: { providerReference: paymentIntentId }, data: { status: 'refunded' } });
    const before = await tx.booking.findUniqueOrThrow({ where: { id: bookingId } });
    await tx.booking.update({ where: { id: bookingId }, data: { status: 'refunded' } });
    await recordEvent(tx, {
      tenantId: before.tenantId,
      name: 'booking.refunded',
      entityType: 'booking',
      entityId: bookingId,
      fields: { booking_id: bookingId, amount_cents: payment.amountCents },
    });
    return before;
  });
  if (booking?.status === 'held') await deps.holds.release(booking.slotId, booking.holdId, booking.guestCount);
}
