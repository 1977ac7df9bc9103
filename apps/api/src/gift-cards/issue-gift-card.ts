import type { Tx } from '@booking/db';
import { generateGiftCardCode, hashGiftCardCode, normalizeGiftCardCode } from '@booking/signing';

export interface IssuedGiftCard {
  id: string;
  /** The bearer code, `XXXX-XXXX-XXXX-XXXX`; only its hash is stored, so this is its one showing. */
  code: string;
  last4: string;
  balanceCents: number;
  currency: string;
}

/**
 * Creates a gift card worth `amountCents` inside the caller's transaction (a sale or a reissue).
 * The code is generated here and only its hash and last four characters are kept: whoever holds
 * the code can spend the card, so it never reaches the database or an event in clear.
 */
export async function issueGiftCard(
  tx: Tx,
  input: { tenantId: string; amountCents: number; currency: string },
): Promise<IssuedGiftCard> {
  const code = generateGiftCardCode();
  const last4 = normalizeGiftCardCode(code).slice(-4);
  const card = await tx.giftCard.create({
    data: {
      tenantId: input.tenantId,
      codeHash: hashGiftCardCode(code),
      codeLast4: last4,
      currency: input.currency,
      initialBalanceCents: input.amountCents,
      balanceCents: input.amountCents,
    },
  });
  return { id: card.id, code, last4, balanceCents: card.balanceCents, currency: card.currency };
}
