import type { Tx } from '@booking/db';

/**
 * Puts a booking's gift card money back on its card: for a held booking that ends without being
 * confirmed (cancelled, or refunded because its seats were gone), the card paid for nothing.
 * The caller holds the booking's lock; the card row is locked here, last, as everywhere.
 */
export async function returnGiftCardPart(tx: Tx, bookingId: string): Promise<number> {
  const payments = await tx.$queryRaw<{ id: string; unreturned: number; gift_card_id: string }[]>`
    SELECT p.id, p.amount_cents - p.refunded_cents AS unreturned, b.gift_card_id
    FROM payments p JOIN bookings b ON b.id = p.booking_id
    WHERE p.booking_id = ${bookingId}::uuid AND p.method = 'gift_card' AND p.status = 'succeeded'
      AND b.gift_card_id IS NOT NULL AND p.amount_cents > p.refunded_cents
    FOR UPDATE OF p`;
  let returned = 0;
  for (const payment of payments) {
    await tx.$executeRaw`SELECT 1 FROM gift_cards WHERE id = ${payment.gift_card_id}::uuid FOR UPDATE`;
    await tx.giftCard.update({
      where: { id: payment.gift_card_id },
      data: { balanceCents: { increment: payment.unreturned } },
    });
    await tx.payment.update({
      where: { id: payment.id },
      data: { status: 'refunded', refundedCents: { increment: payment.unreturned } },
    });
    returned += payment.unreturned;
  }
  return returned;
}
