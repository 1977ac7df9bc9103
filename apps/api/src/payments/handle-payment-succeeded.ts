import type { Db, Tx } from '@booking/db';
import type Stripe from 'stripe';
import { confirmBooking } from '../bookings/confirm-booking';
import { lockSlotAndCheckSeats } from '../bookings/lock-slot';
import type { HoldStore } from '../holds/hold-store';
import { refundForReview } from './refund-for-review';

type Deps = { db: Db; holds: HoldStore; stripe: Stripe };

interface LockedBooking {
  id: string;
  tenant_id: string;
  experience_id: string;
  venue_id: string;
  slot_id: string;
  hold_id: string;
  status: string;
  guest_count: number;
  total_cents: number;
  gift_card_applied_cents: number;
  currency: string;
  review_reason: string | null;
  customer_email: string;
}

type Outcome =
  { kind: 'ignored' } | { kind: 'confirmed'; booking: LockedBooking } | { kind: 'refund'; bookingId: string };

async function lockBooking(tx: Tx, bookingId: string): Promise<LockedBooking | undefined> {
  const [row] = await tx.$queryRaw<LockedBooking[]>`
    SELECT b.id, b.tenant_id, b.experience_id, b.venue_id, b.slot_id, b.hold_id, b.status, b.guest_count,
           b.total_cents, b.gift_card_applied_cents, b.currency, b.review_reason, c.email AS customer_email
    FROM bookings b JOIN customers c ON c.id = b.customer_id
    WHERE b.id = ${bookingId}::uuid FOR UPDATE OF b`;
  return row;
}

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
    const booking = await lockBooking(tx, bookingId);
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
    await confirmBooking(
      tx,
      {
        id: booking.id,
        tenantId: booking.tenant_id,
        experienceId: booking.experience_id,
        venueId: booking.venue_id,
        slotId: booking.slot_id,
        guestCount: booking.guest_count,
        totalCents: booking.total_cents,
        currency: booking.currency,
        customerEmail: booking.customer_email,
      },
      { method: 'card', netPaidCents: paidCents + booking.gift_card_applied_cents },
    );
    // Its seats now count in seats_booked; still under the slot lock, the hold stops counting
    // them, so no replica ever counts them twice (and refuses or refunds another booking for it).
    await deps.holds.release(booking.slot_id, booking.hold_id, booking.guest_count);
    return { kind: 'confirmed', booking };
  });

  if (outcome.kind === 'refund') {
    await refundForReview(deps, outcome.bookingId, intent.id);
  }
}
