import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { confirmBooking } from '../bookings/confirm-booking';
import { confirmableOf, lockPayableBooking, type PayableBooking } from '../bookings/lock-payable-booking';
import { lockSlotAndCheckSeats } from '../bookings/lock-slot';
import type { HoldStore } from '../holds/hold-store';
import { refundForReview } from './refund-for-review';

type Deps = { db: Db; holds: HoldStore; stripe: Stripe };

type Outcome =
  { kind: 'ignored' } | { kind: 'confirmed'; booking: PayableBooking } | { kind: 'refund'; bookingId: string };

/**
 * `payment_intent.succeeded`: confirm the booking, exactly once however often the provider
 * delivers the event.
 *
 * A held booking keeps its seats only until its hold expires. If the payment lands later and
 * the seats were sold meanwhile, confirming would oversell: the booking is marked for review and
 * the payment refunded instead, so no money is kept for nothing. The refund call happens after
 * the commit; if it fails we answer 500, the provider delivers again, and the redelivery retries
 * the refund (the provider's idempotency key makes that safe).
 */
export async function handlePaymentSucceeded(deps: Deps, eventId: string, intent: Stripe.PaymentIntent): Promise<void> {
  const bookingId = intent.metadata?.booking_id;
  if (!bookingId) return;
  const paidCents = intent.amount_received || intent.amount;

  const outcome = await deps.db.$transaction(async (tx): Promise<Outcome> => {
    const first = await tx.$executeRaw`
      INSERT INTO provider_events (id, type) VALUES (${eventId}, 'payment_intent.succeeded') ON CONFLICT (id) DO NOTHING`;
    const booking = await lockPayableBooking(tx, bookingId);
    if (!booking) return { kind: 'ignored' };
    const payment = await tx.payment.findUnique({ where: { providerReference: intent.id } });

    if (first === 0 || payment) {
      // Seen before. Only an automatic refund that did not go through is left to do.
      const refundPending =
        payment?.status === 'succeeded' && booking.review_reason !== null && booking.status !== 'confirmed';
      return refundPending ? { kind: 'refund', bookingId } : { kind: 'ignored' };
    }
    await tx.payment.create({
      data: {
        tenantId: booking.tenant_id,
        bookingId,
        method: 'card',
        providerReference: intent.id,
        amountCents: paidCents,
        currency: booking.currency,
        status: 'succeeded',
      },
    });
    const fits =
      booking.status === 'held' &&
      (await lockSlotAndCheckSeats(tx, deps.holds, {
        slotId: booking.slot_id,
        seats: booking.guest_count,
        exceptHoldId: booking.hold_id,
      }));
    if (!fits) {
      const reason = booking.status === 'held' ? 'seats_unavailable_at_payment' : `paid_while_${booking.status}`;
      await tx.booking.update({ where: { id: bookingId }, data: { reviewReason: reason } });
      return { kind: 'refund', bookingId };
    }
    await confirmBooking(tx, confirmableOf(booking), {
      method: 'card',
      netPaidCents: paidCents + booking.gift_card_applied_cents,
    });
    // Its seats now count in seats_booked; still under the slot lock, the hold stops counting
    // them, so no replica ever counts them twice (and refuses or refunds another booking for it).
    await deps.holds.release(booking.slot_id, booking.hold_id, booking.guest_count);
    return { kind: 'confirmed', booking };
  });

  if (outcome.kind === 'refund') {
    await refundForReview(deps, outcome.bookingId, intent.id);
  }
}
