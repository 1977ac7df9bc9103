import type { Config } from '@booking/config';
import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import type { ReissueGiftCardResponse } from '../gift-cards/gift-card-schemas';
import { issueGiftCard } from '../gift-cards/issue-gift-card';
import type { Operator } from '../operators/api-key-auth';
import { loadBookingEventSubject } from './confirm-booking';

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
  deps: { db: Db; config: Config },
  operator: Operator,
  bookingId: string,
): Promise<ReissueGiftCardResponse> {
  return deps.db.$transaction(async (tx) => {
    const booking = await lockBooking(tx, operator.tenantId, bookingId);
    if (!booking) throw new AppError('booking_not_found');
    if (booking.status !== 'confirmed') {
      throw new AppError('booking_not_cancellable', `the booking is ${booking.status}`);
    }
    await tx.$queryRaw`SELECT id FROM slots WHERE id = ${booking.slot_id}::uuid FOR NO KEY UPDATE`;
    const paidCents = await lockPaidAmount(tx, bookingId);
    if (paidCents <= 0) throw new AppError('booking_not_refundable', 'nothing was paid for this booking');

    await tx.slot.update({ where: { id: booking.slot_id }, data: { seatsBooked: { decrement: booking.guest_count } } });
    const card = await issueGiftCard(tx, {
      tenantId: operator.tenantId,
      amountCents: paidCents,
      currency: booking.currency,
    });
    await tx.booking.update({
      where: { id: bookingId },
      data: { status: 'cancelled', reissuedGiftCardId: card.id },
    });
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'booking.reissued',
      entityType: 'booking',
      entityId: bookingId,
      fields: {
        ...(await loadBookingEventSubject(tx, bookingId)),
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

async function lockBooking(tx: Tx, tenantId: string, bookingId: string) {
  const [row] = await tx.$queryRaw<{ status: string; slot_id: string; guest_count: number; currency: string }[]>`
    SELECT status, slot_id, guest_count, currency FROM bookings
    WHERE id = ${bookingId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  return row;
}

/**
 * Locks the booking's payments and returns what they took, net of refunds. A refund still
 * waiting for the provider's answer makes the amount uncertain, so the reissue waits for it.
 */
async function lockPaidAmount(tx: Tx, bookingId: string): Promise<number> {
  const payments = await tx.$queryRaw<{ amount_cents: number; refunded_cents: number }[]>`
    SELECT amount_cents, refunded_cents FROM payments
    WHERE booking_id = ${bookingId}::uuid AND status = 'succeeded'
    ORDER BY id FOR UPDATE`;
  if (await tx.refund.count({ where: { bookingId, status: 'pending' } })) {
    throw new AppError('refund_in_progress', 'a refund of this booking is waiting for the payment provider');
  }
  // A card payment that arrived too late (review_reason) is being refunded automatically:
  // reissuing it as a gift card as well would pay it out twice.
  const [review] = await tx.$queryRaw<{ review_reason: string | null }[]>`
    SELECT review_reason FROM bookings WHERE id = ${bookingId}::uuid`;
  if (review?.review_reason) {
    throw new AppError('refund_in_progress', 'a late card payment of this booking is being refunded automatically');
  }
  return payments.reduce((sum, payment) => sum + payment.amount_cents - payment.refunded_cents, 0);
}
