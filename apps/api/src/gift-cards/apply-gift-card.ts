import type { Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { hashGiftCardCode } from '@booking/signing';

/**
 * Spends up to `totalCents` of a gift card inside the booking's transaction. The card row is
 * locked, so two bookings spending one card queue and the balance never goes below zero.
 */
export async function applyGiftCard(
  tx: Tx,
  input: { tenantId: string; code: string; currency: string; totalCents: number },
): Promise<{ giftCardId: string; appliedCents: number }> {
  const [card] = await tx.$queryRaw<{ id: string; currency: string; balance_cents: number }[]>`
    SELECT id, currency, balance_cents FROM gift_cards
    WHERE tenant_id = ${input.tenantId}::uuid AND code_hash = ${hashGiftCardCode(input.code)}
    FOR UPDATE`;
  if (!card) throw new AppError('gift_card_not_found');
  if (card.currency !== input.currency) {
    throw new AppError('gift_card_currency_mismatch', {
      gift_card_currency: card.currency,
      booking_currency: input.currency,
    });
  }
  if (card.balance_cents <= 0) throw new AppError('gift_card_empty');
  const appliedCents = Math.min(card.balance_cents, input.totalCents);
  await tx.giftCard.update({ where: { id: card.id }, data: { balanceCents: { decrement: appliedCents } } });
  return { giftCardId: card.id, appliedCents };
}
