import type { Tx } from '@booking/db';
import { lockGiftCard, lockGiftCardPayments } from '../locks';

/**
 * Puts a booking's gift card money back on its card: for a held booking that ends without being
 * confirmed (cancelled, or refunded because its seats were gone), the card paid for nothing.
 * The caller holds the booking's lock; the payment, then the card, are locked here.
 */
export async function returnGiftCardPart(tx: Tx, bookingId: string): Promise<number> {
  const payments = await lockGiftCardPayments(tx, bookingId);
  let returned = 0;
  for (const payment of payments) {
    await lockGiftCard(tx, payment.giftCardId);
    await tx.giftCard.update({
      where: { id: payment.giftCardId },
      data: { balanceCents: { increment: payment.unreturnedCents } },
    });
    await tx.payment.update({
      where: { id: payment.id },
      data: { status: 'refunded', refundedCents: { increment: payment.unreturnedCents } },
    });
    returned += payment.unreturnedCents;
  }
  return returned;
}
