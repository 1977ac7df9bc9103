import type { Tx } from '@booking/db';
import { hashGiftCardCode } from '@booking/signing';
import { claimLock } from './lock-order';

/**
 * Locks the tenant's gift card with this code (looked up by the code's hash: codes are never
 * stored), so two spends of one card queue and its balance never goes below zero.
 */
export async function lockGiftCardByCode(
  tx: Tx,
  tenantId: string,
  code: string,
): Promise<{ id: string; currency: string; balanceCents: number } | undefined> {
  claimLock(tx, 'gift_card');
  const [card] = await tx.$queryRaw<{ id: string; currency: string; balance_cents: number }[]>`
    SELECT id, currency, balance_cents FROM gift_cards
    WHERE tenant_id = ${tenantId}::uuid AND code_hash = ${hashGiftCardCode(code)}
    FOR UPDATE`;
  return card && { id: card.id, currency: card.currency, balanceCents: card.balance_cents };
}

/** Locks a gift card by id before money goes back on it. */
export async function lockGiftCard(tx: Tx, giftCardId: string): Promise<void> {
  claimLock(tx, 'gift_card');
  await tx.$executeRaw`SELECT 1 FROM gift_cards WHERE id = ${giftCardId}::uuid FOR UPDATE`;
}
