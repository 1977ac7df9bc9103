import type { Tx } from '@booking/db';
import { hashGiftCardCode } from '@booking/signing';
import { claimLock } from './lock-order';

/**
 * Locks the tenant's gift card with this code (looked up by the code's hash: codes are never
 * stored), so two spends of one card queue and its balance never goes below zero.
 */
export async function lockGiftCardByCode(tx: Tx, tenantId: string, code: string): Promise<LockedGiftCard | undefined> {
  claimLock(tx, 'gift_card');
  const [card] = await tx.$queryRaw<{ id: string; currency: string; balance_cents: number; held_cents: number }[]>`
    SELECT id, currency, balance_cents, held_cents FROM gift_cards
    WHERE tenant_id = ${tenantId}::uuid AND code_hash = ${hashGiftCardCode(code)}
    FOR UPDATE`;
  return (
    card && {
      id: card.id,
      currency: card.currency,
      balanceCents: card.balance_cents,
      availableCents: card.balance_cents - card.held_cents,
    }
  );
}

/** A locked gift card; available = balance less what open POS orders hold on it. */
export interface LockedGiftCard {
  id: string;
  currency: string;
  balanceCents: number;
  availableCents: number;
}

/** Locks a gift card by id before money goes back on it, or a held value is captured or released. */
export async function lockGiftCard(tx: Tx, giftCardId: string): Promise<void> {
  claimLock(tx, 'gift_card', giftCardId);
  await tx.$executeRaw`SELECT 1 FROM gift_cards WHERE id = ${giftCardId}::uuid FOR UPDATE`;
}

/**
 * Locks the gift cards of an order's tenders in id order, in one statement, so two orders holding
 * the same two cards never wait on each other in a cycle. Missing ids (tenders of other kinds) are
 * left out.
 */
export async function lockGiftCards(tx: Tx, giftCardIds: readonly (string | null)[]): Promise<void> {
  const ids = [...new Set(giftCardIds.filter((id): id is string => id !== null))].sort();
  if (ids.length === 0) return;
  claimLock(tx, 'gift_card');
  await tx.$executeRaw`SELECT 1 FROM gift_cards WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
}
