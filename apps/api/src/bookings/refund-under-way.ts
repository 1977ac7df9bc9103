import { Prisma, type Tx } from '@booking/db';

/**
 * A held booking whose late card payment is being given back (its automatic refund is due or
 * pending: automatic-refund.ts) is not unpaid: its hold is gone, but cancelling it would say "no
 * refund" while money is on its way back. Its refund's outcome ends it instead (refunded, or
 * cancelled when it failed). A refund still only due (Stripe refused every try) is waited for
 * while Stripe redelivers the payment, three days; after that the booking can be cancelled like
 * an unpaid one rather than stay held for good, and the payment stays due for its next try. A
 * mismatched payment's refund (it did not cover the booking) counts too: that booking keeps its
 * hold and stays payable, but is not cancelled while money is on its way back either. `b` is the
 * booking.
 */
export const REFUND_UNDER_WAY = Prisma.sql`(
  EXISTS (SELECT 1 FROM payments p
          WHERE p.booking_id = b.id AND p.refund_due AND p.created_at > now() - interval '3 days')
  OR EXISTS (SELECT 1 FROM refunds r WHERE r.booking_id = b.id AND r.automatic AND r.status = 'pending'))`;

/** Whether a booking's late card payment is being given back (REFUND_UNDER_WAY); read under its lock. */
export async function refundUnderWay(tx: Tx, bookingId: string): Promise<boolean> {
  const [row] = await tx.$queryRaw<{ yes: boolean }[]>`
    SELECT ${REFUND_UNDER_WAY} AS yes FROM bookings b WHERE b.id = ${bookingId}::uuid`;
  return row?.yes ?? false;
}
