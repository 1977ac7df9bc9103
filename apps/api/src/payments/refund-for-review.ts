import type { Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import Stripe from 'stripe';
import type { HoldStore } from '../holds/hold-store';

/**
 * Gives back a card payment that could not buy its seats, then records the booking as refunded
 * (booking.refunded). A retry after a crash or a failed call never refunds twice: the provider
 * refuses a second full refund.
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
      metadata: { booking_id: bookingId, reason: 'automatic: booking could not be confirmed' },
    });
  } catch (error) {
    // Refunded already, by a delivery whose bookkeeping below did not commit or by a concurrent one.
    if (!(error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'charge_already_refunded'))
      throw error;
  }
  const booking = await deps.db.$transaction(async (tx) => {
    // Redeliveries racing through here all get the same provider refund back; only the first
    // records it (one booking.refunded), the others find the payment already refunded.
    const [locked] = await tx.$queryRaw<{ status: string; amount_cents: number }[]>`
      SELECT status, amount_cents FROM payments WHERE provider_reference = ${paymentIntentId} FOR UPDATE`;
    if (!locked || locked.status === 'refunded') return null;
    const payment = await tx.payment.update({
      where: { providerReference: paymentIntentId },
      // Refunded in full: what the refund routes read as nothing left to refund.
      data: { status: 'refunded', refundedCents: locked.amount_cents },
    });
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
