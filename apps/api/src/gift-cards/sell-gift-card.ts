import { randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import type Stripe from 'stripe';
import { lockOpenShift, lockSaleReference } from '../locks';
import { assertReferenceUnused } from '../payments/provider-payment';
import type { Operator } from '../operators/api-key-auth';
import type { SellGiftCardRequest, SellGiftCardResponse } from './gift-card-schemas';
import { issueGiftCard } from './issue-gift-card';
import { assertPaidForSale } from './verify-sale-payment';

/**
 * Sells a gift card at the till: the buyer has paid (by card, the provider's payment id in
 * hand, or in cash into an open shift), so the card is issued with its full value, its sale
 * recorded, and gift_card.sold written, all in one transaction.
 *
 * The code appears only in the response. The event names the card and the sale, never the code
 * or the recipient: whoever reads the code can spend the card.
 */
export async function sellGiftCard(
  deps: { db: Db; stripe: Stripe | null },
  operator: Operator,
  request: SellGiftCardRequest,
): Promise<SellGiftCardResponse> {
  const { db } = deps;
  if (request.payment_method === 'cash' && request.payment_reference !== undefined) {
    throw new AppError('invalid_body', [
      { field: '/payment_reference', message: 'is only for card payments; cash is tracked by its shift' },
    ]);
  }
  // recipient_email is for the receipt the till gives the buyer; this service keeps it nowhere.
  const saleId = randomUUID();

  // The provider is asked before the transaction, so no row or lock waits on its answer. A
  // reference already used is refused first, without asking; whether it is still unused is
  // decided again under the reference's lock below.
  if (request.payment_reference !== undefined) {
    await assertReferenceUnused(db, request.payment_reference);
    await assertPaidForSale(deps.stripe, request.payment_reference, {
      tenantId: operator.tenantId,
      amountCents: request.amount_cents,
      currency: request.currency,
    });
  }

  return db.$transaction(async (tx) => {
    // Share-locked until the sale commits, so a concurrent close waits for it and counts its cash.
    if (request.shift_id !== undefined) await lockOpenShift(tx, operator.tenantId, request.shift_id, 'share');
    if (request.payment_reference !== undefined) {
      await lockSaleReference(tx, request.payment_reference);
      await assertReferenceUnused(tx, request.payment_reference);
    }

    const card = await issueGiftCard(tx, {
      tenantId: operator.tenantId,
      amountCents: request.amount_cents,
      currency: request.currency,
    });
    await tx.giftCardSale.create({
      data: {
        id: saleId,
        tenantId: operator.tenantId,
        giftCardId: card.id,
        amountCents: request.amount_cents,
        currency: request.currency,
        method: request.payment_method,
        paymentReference: request.payment_reference,
        shiftId: request.shift_id,
        actorKeyId: operator.keyId,
      },
    });
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'gift_card.sold',
      // A sale is an order (no booking, customer or wallet is its subject); its id is the sale's.
      entityType: 'order',
      entityId: saleId,
      fields: {
        gift_card_id: card.id,
        amount_cents: request.amount_cents,
        currency: request.currency,
        payment_id: saleId,
        actor_user_id: operator.keyId,
      },
    });

    return {
      gift_card_id: card.id,
      code: card.code,
      balance_cents: card.balanceCents,
      currency: card.currency,
      last4: card.last4,
      sale_id: saleId,
    };
  });
}
