import type { Tx } from '@booking/db';
import type { Logger } from '@booking/logging';
import type { LockedBooking, LockedRefund } from '../locks';
import { cancelHeldBooking } from '../bookings/cancel-held-booking';
import type { HoldRelease } from './refund-bookkeeping';

/** The review_reason of a booking whose automatic refund failed: its card money is still here. */
export const AUTOMATIC_REFUND_FAILED = 'automatic_refund_failed';

/**
 * The provider reports that an automatic refund (automatic-refund.ts) failed, in its answer or a
 * later notification about a pending one: the customer got nothing back. The caller has recorded
 * the refund as failed and left its amount refundable; here the booking is flagged (review_reason)
 * for an operator, who refunds the payment through the refund routes (the flag clears once that
 * money is back: refund-bookkeeping). A booking still `held` (its refund was pending, or this is
 * the first answer) becomes `cancelled`: it cannot be confirmed any more and no money went back,
 * which is what booking.cancelled says. A cancelled booking (cancelled before the payment landed)
 * stays cancelled, and one confirmed by other money (cash) keeps its status and seats. A
 * mismatched payment (it did not cover what the booking owed) never paid for the booking: a held
 * booking stays held and payable, only flagged. The caller holds the booking lock. Logged here, so
 * a rolled-back attempt may log twice.
 */
export async function bookFailedAutomaticRefund(
  tx: Tx,
  booking: LockedBooking,
  refund: { id: string; amountCents: number; paymentId: string },
  logger?: Logger,
): Promise<HoldRelease | null> {
  await flagBooking(tx, booking, refund, logger);
  if (booking.status !== 'held') return null;
  const { mismatched } = await tx.payment.findUniqueOrThrow({
    where: { id: refund.paymentId },
    select: { mismatched: true },
  });
  return mismatched ? null : cancelHeldBooking(tx, booking, AUTOMATIC_REFUND_FAILED);
}

/**
 * The provider reports failed an automatic refund it had reported succeeded (rare: the card was
 * closed meanwhile). The money is ours again: the refund becomes `failed` and its amount
 * refundable again (refund.created was sent and stays), and the booking is flagged. The booking
 * keeps its status: a `refunded` one is final, so the operator gives that money back in Stripe's
 * dashboard (its notification is recorded as a dashboard refund); one that kept its status
 * (confirmed by cash) is refunded through the refund routes. The caller holds the booking and
 * refund locks.
 */
export async function bookReversedAutomaticRefund(
  tx: Tx,
  booking: LockedBooking,
  refund: LockedRefund,
  logger?: Logger,
): Promise<void> {
  await tx.refund.update({ where: { id: refund.id }, data: { status: 'failed' } });
  await tx.payment.update({
    where: { id: refund.paymentId },
    // It was the payment's one full refund: nothing of it is given back any more.
    data: { status: 'succeeded', refundedCents: { decrement: refund.amountCents } },
  });
  await flagBooking(tx, booking, refund, logger);
}

async function flagBooking(
  tx: Tx,
  booking: LockedBooking,
  refund: { id: string; amountCents: number },
  logger: Logger | undefined,
): Promise<void> {
  logger?.warn(
    {
      booking_id: booking.id,
      booking_status: booking.status,
      refund_id: refund.id,
      amount_cents: refund.amountCents,
    },
    booking.status === 'refunded'
      ? 'automatic refund failed at the payment provider after it succeeded; give the money back in its dashboard'
      : 'automatic refund failed at the payment provider; the booking is flagged for an operator to refund',
  );
  await tx.booking.update({ where: { id: booking.id }, data: { reviewReason: AUTOMATIC_REFUND_FAILED } });
}
