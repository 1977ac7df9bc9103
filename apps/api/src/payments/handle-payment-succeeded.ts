import type { Db } from '@booking/db';
import { bookingAllows, isUuid } from '@booking/domain';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { confirmBooking } from '../bookings/confirm-booking';
import { lockSlotAndReserveSeats } from '../bookings/lock-slot';
import type { HoldStore } from '../holds/hold-store';
import { ANY_TENANT, findBookingForUpdate, type LockedBooking } from '../locks';
import { coversBooking, PAYMENT_AMOUNT_MISMATCH } from './payment-covers-booking';
import { AUTOMATIC_REFUND_FAILED } from '../refunds/automatic-refund-failed';
import { refundForReview } from './refund-for-review';

type Deps = { db: Db; holds: HoldStore; stripe: Stripe; logger?: Logger };

type Outcome =
  { kind: 'ignored' } | { kind: 'confirmed'; booking: LockedBooking } | { kind: 'refund'; bookingId: string };

/**
 * `payment_intent.succeeded`: confirm the booking, exactly once however often the provider
 * delivers the event.
 *
 * A held booking keeps its seats only until its hold expires. If the payment lands later and
 * the seats were sold meanwhile, confirming would oversell: the booking is marked for review and
 * the payment refunded instead, so no money is kept for nothing. The refund call happens after
 * the commit; if it fails we answer 500, the provider delivers again, and the redelivery retries
 * the refund (payments.refund_due marks it until the provider's answer is recorded; a second full
 * refund is refused by the provider).
 *
 * A payment that does not cover what a held booking owes (less, or another currency: an intent
 * made in Stripe's dashboard, say) confirms nothing either. It is recorded `mismatched` and
 * refunded the same way, but its refund leaves the booking alone (automatic-refund.ts): the
 * booking stays held with its hold, so the customer can still pay the right amount before it
 * expires. More than owed confirms (coversBooking).
 */
export async function handlePaymentSucceeded(deps: Deps, eventId: string, intent: Stripe.PaymentIntent): Promise<void> {
  const bookingId = intent.metadata?.booking_id;
  // Another system's intent on the account may name its own bookings: not ids of ours.
  if (!bookingId || !isUuid(bookingId)) return;
  const paid = { amountCents: intent.amount_received || intent.amount, currency: intent.currency.toUpperCase() };

  const outcome = await deps.db.$transaction(async (tx): Promise<Outcome> => {
    const first = await tx.$executeRaw`
      INSERT INTO provider_events (id, type) VALUES (${eventId}, 'payment_intent.succeeded') ON CONFLICT (id) DO NOTHING`;
    // The notification is authenticated by its signature; the booking names its own tenant.
    const booking = await findBookingForUpdate(tx, bookingId, ANY_TENANT);
    if (!booking) return { kind: 'ignored' };
    const payment = await tx.payment.findUnique({ where: { providerReference: intent.id } });

    if (first === 0 || payment) {
      // Seen before. Only an automatic refund whose answer was never recorded is left to do,
      // whatever became of the booking since (one paid at the till meanwhile stays confirmed).
      const refundPending = payment?.status === 'succeeded' && payment.refundDue;
      return refundPending ? { kind: 'refund', bookingId } : { kind: 'ignored' };
    }
    const payable = bookingAllows(booking.status, 'pay');
    // Checked before the seats: a payment that cannot pay for the booking reserves nothing.
    const mismatched = payable && !coversBooking(paid, booking);
    const fits =
      payable &&
      !mismatched &&
      (await lockSlotAndReserveSeats(tx, deps.holds, {
        tenantId: booking.tenantId,
        slotId: booking.slotId,
        seats: booking.guestCount,
        exceptHoldId: booking.holdId,
      }));
    await tx.payment.create({
      data: {
        tenantId: booking.tenantId,
        bookingId,
        method: 'card',
        providerReference: intent.id,
        amountCents: paid.amountCents,
        // What was paid, as paid: a mismatched payment's currency may not be the booking's.
        currency: paid.currency,
        status: 'succeeded',
        refundDue: !fits,
        mismatched,
      },
    });
    if (!fits) {
      const reason = mismatched
        ? PAYMENT_AMOUNT_MISMATCH
        : booking.status === 'held'
          ? 'seats_unavailable_at_payment'
          : `paid_while_${booking.status}`;
      // A flag that an automatic refund failed stays until that money is back (refund-bookkeeping):
      // it is the one telling an operator that money is still to give back. A mismatched payment
      // flags only a booking with no flag yet: one already set is about the booking's own money (a
      // late payment's refund under way), which matters more.
      const keepFlag =
        booking.reviewReason === AUTOMATIC_REFUND_FAILED || (mismatched && booking.reviewReason !== null);
      if (!keepFlag) {
        await tx.booking.update({ where: { id: bookingId }, data: { reviewReason: reason } });
      }
      return { kind: 'refund', bookingId };
    }
    await confirmBooking(
      tx,
      deps.holds,
      booking,
      { id: booking.holdId, seats: booking.guestCount },
      { method: 'card', netPaidCents: paid.amountCents + booking.giftCardAppliedCents },
    );
    return { kind: 'confirmed', booking };
  });

  if (outcome.kind === 'refund') {
    await refundForReview(deps, outcome.bookingId, intent.id);
  }
}
