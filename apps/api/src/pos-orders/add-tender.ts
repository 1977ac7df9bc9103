import { randomUUID } from 'node:crypto';
import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import {
  lockGiftCardByCode,
  lockOpenShift,
  lockOrder,
  lockSaleReference,
  lockWallet,
  type LockedOrder,
} from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { OrderView } from '../orders/order-schemas';
import { loadOrderView } from '../orders/order-view';
import { assertProviderPayment, assertReferenceUnused } from '../payments/provider-payment';
import { findWalletByToken } from '../wallets/find-wallet-by-token';
import { holdWalletValue } from '../wallets/wallet-ledger';
import type { AddTenderRequest } from './pos-order-schemas';

/** The PaymentIntent metadata `purpose` of a card tender at the till. */
export const POS_ORDER_PURPOSE = 'pos_order';

/** Which field each tender type takes, and none other. */
const FIELD_OF = {
  card: 'payment_reference',
  wallet: 'wallet_token',
  gift_card: 'gift_card_code',
  cash: null,
} as const;
const FIELDS = ['payment_reference', 'wallet_token', 'gift_card_code'] as const;

/**
 * Adds a way of paying to an open till order. Wallet and gift card value is held (set aside, not
 * yet spent) until the order settles or is voided, so two tills spending one wallet's last
 * value queue on the wallet's lock and the second is refused. A card tender is a payment the
 * till's Stripe integration already took, checked with the provider before the transaction; cash
 * goes into the order's shift.
 */
export async function addTender(
  deps: { db: Db; stripe: Stripe | null },
  operator: Operator,
  orderId: string,
  request: AddTenderRequest,
): Promise<OrderView> {
  const needed = FIELD_OF[request.type];
  const wrong = FIELDS.filter((field) => (field === needed) !== (request[field] !== undefined));
  if (wrong.length > 0) {
    throw new AppError(
      'invalid_body',
      wrong.map((field) => ({
        field: `/${field}`,
        message: field === needed ? `is required for a ${request.type} tender` : `is not for a ${request.type} tender`,
      })),
    );
  }

  const order = await deps.db.order.findFirst({ where: { id: orderId, tenantId: operator.tenantId, channel: 'pos' } });
  if (!order) throw new AppError('order_not_found');
  if (request.type === 'card') {
    await assertProviderPayment(deps.stripe, request.payment_reference!, {
      tenantId: operator.tenantId,
      amountCents: request.amount_cents,
      currency: order.currency,
      purpose: POS_ORDER_PURPOSE,
      orderId,
    });
  }

  return deps.db.$transaction(async (tx) => {
    // Share-locked: a concurrent close waits for this tender, and a closed till takes none.
    if (order.shiftId) await lockOpenShift(tx, operator.tenantId, order.shiftId, 'share');
    if (request.type === 'card') {
      await lockSaleReference(tx, request.payment_reference!);
      await assertReferenceUnused(tx, request.payment_reference!);
    }
    const token =
      request.type === 'wallet' ? await findWalletByToken(tx, operator.tenantId, request.wallet_token!) : null;
    const locked = (await lockOrder(tx, { tenantId: operator.tenantId }, orderId))!;
    if (locked.status !== 'open') throw new AppError('order_not_open', { status: locked.status });
    await assertWithinTotal(tx, locked, request.amount_cents);

    const tenderId = randomUUID();
    const tender = {
      id: tenderId,
      orderId,
      type: request.type,
      status: 'held' as const,
      amountCents: request.amount_cents,
    };
    if (request.type === 'wallet') {
      const wallet = (await lockWallet(tx, { tenantId: operator.tenantId }, token!.walletId))!;
      // Token changes take the wallet's lock: under it, a token revoked meanwhile is seen revoked.
      await findWalletByToken(tx, operator.tenantId, request.wallet_token!);
      if (wallet.currency !== locked.currency) {
        throw new AppError('wallet_currency_mismatch', {
          wallet_currency: wallet.currency,
          order_currency: locked.currency,
        });
      }
      await tx.orderTender.create({ data: { ...tender, walletId: wallet.id, walletTokenId: token!.tokenId } });
      await holdWalletValue(tx, wallet, request.amount_cents, { orderId, tenderId, actorKeyId: operator.keyId });
    } else if (request.type === 'gift_card') {
      const card = await lockGiftCardByCode(tx, operator.tenantId, request.gift_card_code!);
      if (!card) throw new AppError('gift_card_not_found');
      if (card.currency !== locked.currency) {
        throw new AppError('gift_card_currency_mismatch', {
          gift_card_currency: card.currency,
          order_currency: locked.currency,
        });
      }
      if (card.availableCents < request.amount_cents) {
        throw new AppError('insufficient_gift_card_balance', {
          available_cents: card.availableCents,
          currency: card.currency,
        });
      }
      await tx.orderTender.create({ data: { ...tender, giftCardId: card.id } });
      await tx.giftCard.update({ where: { id: card.id }, data: { heldCents: { increment: request.amount_cents } } });
    } else {
      await tx.orderTender.create({
        data: {
          ...tender,
          paymentReference: request.payment_reference ?? null,
          shiftId: request.type === 'cash' ? locked.shiftId : null,
        },
      });
    }
    return (await loadOrderView(tx, orderId, operator.tenantId))!;
  });
}

/** Tenders never add up to more than the order's total. */
async function assertWithinTotal(tx: Tx, order: LockedOrder, amountCents: number): Promise<void> {
  const live = await tx.orderTender.findMany({
    where: { orderId: order.id, status: { not: 'released' } },
    select: { amountCents: true, refundedCents: true },
  });
  // A card tender partly refunded at Stripe covers only what it kept.
  const tendered = live.reduce((sum, tender) => sum + tender.amountCents - tender.refundedCents, 0);
  const remaining = order.totalCents - tendered;
  if (amountCents > remaining) throw new AppError('tenders_exceed_total', { remaining_cents: remaining });
}
