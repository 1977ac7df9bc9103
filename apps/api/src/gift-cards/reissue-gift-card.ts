import type { Config } from '@booking/config';
import type { Db, Tx } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { changeBookedSeats } from '../holds/booked-seats';
import type { HoldStore } from '../holds/hold-store';
import { lockBooking, lockSlot, lockSucceededPayments, type LockedBooking } from '../locks';
import { releaseBookingUses } from '../membership-uses/booking-uses';
import type { Operator } from '../operators/api-key-auth';
import type { ReissueGiftCardResponse } from './gift-card-schemas';
import { issueGiftCard } from './issue-gift-card';

/**
 * Cancels a confirmed booking and gives its paid amount back as a new gift card, instead of a
 * refund through the payment provider. The paid amount is what its succeeded payments (gift
 * card, card and cash alike) took, less what was already refunded of them.
 *
 * One transaction, locking in the house order: the booking row (so a second reissue, a cancel
 * or a refund of the same booking waits and then finds it cancelled), the slot row (its seats
 * go back), then the payment rows (so no refund can raise refunded_cents meanwhile).
 *
 * Only booking.reissued is recorded, not booking.cancelled as well: the catalogue defines
 * booking.cancelled as a cancellation that "implies no refund", which this is not, and
 * booking.reissued already means "booking cancelled and paid amount reissued". A receiver that
 * tracks cancellations subscribes to both.
 */
export async function reissueGiftCard(
  deps: { db: Db; holds: HoldStore; config: Config },
  operator: Operator,
  bookingId: string,
): Promise<ReissueGiftCardResponse> {
  return deps.db.$transaction(async (tx) => {
    const booking = await lockBooking(tx, bookingId, { tenantId: operator.tenantId });
    assertBookingAllows(booking.status, 'reissue');
    await lockSlot(tx, operator.tenantId, booking.slotId);
    const paidCents = await lockPaidAmount(tx, booking);
    if (paidCents <= 0) throw new AppError('booking_not_refundable', 'nothing was paid for this booking');

    await changeBookedSeats(tx, deps.holds, booking.slotId, -booking.guestCount);
    const card = await issueGiftCard(tx, {
      tenantId: operator.tenantId,
      amountCents: paidCents,
      currency: booking.currency,
    });
    await tx.booking.update({
      where: { id: bookingId },
      data: { status: 'cancelled', reissuedGiftCardId: card.id },
    });
    await releaseBookingUses(tx, bookingId);
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'booking.reissued',
      entityType: 'booking',
      entityId: bookingId,
      fields: {
        ...bookingEventSubject(booking),
        new_gift_card_id: card.id,
        amount_cents: paidCents,
        actor_user_id: operator.keyId,
      },
      // The one event that carries a code (the catalogue lists it, for receivers that send it
      // on). A code is a bearer secret: the outbox keeps it sealed, like signing secrets.
      secretFields: { new_gift_card_code: card.code },
      secretKey: deps.config.webhooks.secretKey,
    });

    return {
      booking_id: bookingId,
      status: 'cancelled' as const,
      gift_card: { id: card.id, code: card.code, balance_cents: card.balanceCents, currency: card.currency },
    };
  });
}

/**
 * Locks the booking's payments and returns what they took, net of refunds. A refund still
 * waiting for the provider's answer makes the amount uncertain, so the reissue waits for it.
 */
async function lockPaidAmount(tx: Tx, booking: LockedBooking): Promise<number> {
  const payments = await lockSucceededPayments(tx, booking.id);
  if (await tx.refund.count({ where: { bookingId: booking.id, status: 'pending' } })) {
    throw new AppError('refund_in_progress', 'a refund of this booking is waiting for the payment provider');
  }
  // A card payment that arrived too late is being refunded automatically: reissuing it as a
  // gift card as well would pay it out twice. Once refunded, it is no longer among these.
  if (payments.some((payment) => payment.refundDue)) {
    throw new AppError('refund_in_progress', 'a late card payment of this booking is being refunded automatically');
  }
  return payments.reduce((sum, payment) => sum + payment.amountCents - payment.refundedCents, 0);
}
