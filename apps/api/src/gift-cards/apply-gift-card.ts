import type { Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { lockGiftCardByCode } from '../locks';

/**
 * Spends up to `totalCents` of a gift card inside the booking's transaction. The card row is
 * locked, so two bookings spending one card queue and the balance never goes below zero (nor
 * below what open till orders hold on it: the database refuses that too).
 */
export async function applyGiftCard(
  tx: Tx,
  input: { tenantId: string; code: string; currency: string; totalCents: number },
): Promise<{ giftCardId: string; appliedCents: number }> {
  const card = await lockGiftCardByCode(tx, input.tenantId, input.code);
  if (!card) throw new AppError('gift_card_not_found');
  if (card.currency !== input.currency) {
    throw new AppError('gift_card_currency_mismatch', {
      gift_card_currency: card.currency,
      booking_currency: input.currency,
    });
  }
  // Value held by an open till order is promised to it, so a booking spends only the rest.
  if (card.availableCents <= 0) throw new AppError('gift_card_empty');
  const appliedCents = Math.min(card.availableCents, input.totalCents);
  await tx.giftCard.update({ where: { id: card.id }, data: { balanceCents: { decrement: appliedCents } } });
  return { giftCardId: card.id, appliedCents };
}
