import type { Tx } from '@booking/db';
import type { Logger } from '@booking/logging';
import type { LockedBooking, LockedRefund } from '../locks';

/**
 * review_reason of a booking one of whose refunds (an operator's, or one made in Stripe's
 * dashboard) Stripe reported failed after it had reported it succeeded: that money is back in the
 * account, and the customer may still be owed it. Cleared once refunds made since give at least
 * as much back again (refund-bookkeeping).
 */
export const REFUND_REVERSED = 'refund_reversed';

/**
 * Stripe reports failed a refund it had reported succeeded (rare: the card was closed meanwhile),
 * so the money came back to the account: the refund becomes `failed` (reversed_at says it had
 * succeeded) and its amount is refundable again. Its payment is no longer refunded in full. A
 * failed refund paid nothing out, so its Idempotency-Key reference is given up as for any failed
 * one: a retry of its request may try again. The caller holds the booking and refund locks, and
 * has checked that the refund is `succeeded`: a redelivery finds it failed and moves nothing.
 */
export async function undoSucceededRefund(tx: Tx, refund: LockedRefund): Promise<void> {
  await tx.refund.update({
    where: { id: refund.id },
    data: { status: 'failed', reversedAt: new Date(), idempotencyRef: null },
  });
  await tx.payment.update({
    where: { id: refund.paymentId },
    data: { status: 'succeeded', refundedCents: { decrement: refund.amountCents } },
  });
}

/**
 * An operator's refund (or one made in Stripe's dashboard) reported failed after it succeeded
 * (undoSucceededRefund). The booking keeps its status: a `refunded` one stays `refunded` (its
 * seats went back, booking.refunded was sent), and refund.created stays sent; the catalogue has no
 * event saying a refund failed. It is flagged instead (replacing any other flag: money is at
 * stake) with a warn line, and the operator gives the money back again through the refund routes,
 * which accept a `refunded` booking while it carries this flag, or in Stripe's dashboard.
 * Logged here, so a rolled-back attempt may log twice.
 */
export async function bookReversedRefund(
  tx: Tx,
  booking: LockedBooking,
  refund: LockedRefund,
  logger?: Logger,
): Promise<void> {
  await undoSucceededRefund(tx, refund);
  logger?.warn(
    {
      booking_id: booking.id,
      booking_status: booking.status,
      refund_id: refund.id,
      amount_cents: refund.amountCents,
    },
    'refund failed at the payment provider after it succeeded: its money is back in the account; the booking is flagged for an operator to give it back again',
  );
  await tx.booking.update({ where: { id: booking.id }, data: { reviewReason: REFUND_REVERSED } });
}

/**
 * Whether the money reversed refunds brought back has been given back again: on every card
 * payment with one, refunds that succeeded and were made since its first reversal give back at
 * least what its reversed refunds had, or the payment is refunded in full (`repaid`) and there is
 * nothing more to give.
 */
export async function reversedRefundsRepaid(tx: Tx, bookingId: string, repaid: { id: string }[]): Promise<boolean> {
  const reversed = await tx.refund.findMany({
    where: { bookingId, reversedAt: { not: null } },
    select: { paymentId: true, amountCents: true, reversedAt: true },
  });
  for (const paymentId of new Set(reversed.map((refund) => refund.paymentId))) {
    if (repaid.some((payment) => payment.id === paymentId)) continue;
    const ofPayment = reversed.filter((refund) => refund.paymentId === paymentId);
    const since = new Date(Math.min(...ofPayment.map((refund) => refund.reversedAt!.getTime())));
    const givenAgain = await tx.refund.aggregate({
      where: { paymentId, status: 'succeeded', createdAt: { gt: since } },
      _sum: { amountCents: true },
    });
    const owed = ofPayment.reduce((sum, refund) => sum + refund.amountCents, 0);
    if ((givenAgain._sum.amountCents ?? 0) < owed) return false;
  }
  return true;
}
