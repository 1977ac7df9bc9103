import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { lockGiftCards, lockOrder, lockWallets, type LockedOrder } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { OrderView } from '../orders/order-schemas';
import { cancelPosMemberships, lockOrderMemberships } from '../membership-sales/pos-membership-lines';
import { loadOrderView } from '../orders/order-view';
import { releaseWalletHold } from '../wallets/wallet-ledger';
import { refundVoidedCardTenders } from './refund-voided-card-tenders';

/**
 * Voids an open till order the caller has locked: every wallet and gift card hold is released,
 * cash is handed back (its tender released, so the shift does not count it), and each card
 * tender gets a pending refund row, sent to the provider after the commit; the memberships the
 * order was selling are cancelled. No event: the
 * catalogue has none for a void, and nothing was sold.
 */
export async function voidLockedOrder(tx: Tx, order: LockedOrder, actorKeyId: string | null): Promise<void> {
  if (order.status !== 'open') throw new AppError('order_not_open', { status: order.status });
  const tenders = await tx.orderTender.findMany({ where: { orderId: order.id, status: 'held' } });
  const memberships = await lockOrderMemberships(
    tx,
    order.tenantId,
    await tx.orderLine.findMany({ where: { orderId: order.id, type: 'membership' } }),
  );
  const wallets = await lockWallets(
    tx,
    tenders.flatMap((tender) => (tender.walletId ? [tender.walletId] : [])),
  );
  await lockGiftCards(
    tx,
    tenders.map((tender) => tender.giftCardId),
  );

  const now = new Date();
  for (const tender of tenders) {
    await tx.orderTender.update({ where: { id: tender.id }, data: { status: 'released', releasedAt: now } });
    if (tender.walletId) {
      await releaseWalletHold(tx, wallets.get(tender.walletId)!, tender.amountCents, {
        orderId: order.id,
        tenderId: tender.id,
        actorKeyId: actorKeyId ?? undefined,
        reason: 'order voided',
      });
    } else if (tender.giftCardId) {
      await tx.giftCard.update({
        where: { id: tender.giftCardId },
        data: { heldCents: { decrement: tender.amountCents } },
      });
    } else if (tender.type === 'card') {
      await tx.orderRefund.create({
        data: {
          tenantId: order.tenantId,
          orderId: order.id,
          tenderId: tender.id,
          source: 'void',
          status: 'pending',
          // What Stripe still holds of it: a part refunded there already is not refunded twice.
          amountCents: tender.amountCents - tender.refundedCents,
          reason: 'order voided',
          actorKeyId,
        },
      });
    }
  }
  await cancelPosMemberships(tx, memberships, now);
  await tx.order.update({ where: { id: order.id }, data: { status: 'voided', voidedAt: now } });
}

/** Voids in its own transaction, then refunds its card tenders at the provider. */
export async function voidOrderAndRefund(
  deps: { db: Db; stripe: Stripe | null },
  lockAndVoid: (tx: Tx) => Promise<boolean>,
  orderId: string,
): Promise<boolean> {
  const voided = await deps.db.$transaction(lockAndVoid);
  // A refund the provider refuses now stays pending; the abandoned-orders job tries it again.
  if (voided && deps.stripe)
    await refundVoidedCardTenders({ db: deps.db, stripe: deps.stripe }, orderId).catch(() => undefined);
  return voided;
}

/** Staff void an open till order: holds released, cash handed back, card payments refunded. */
export async function voidPosOrder(
  deps: { db: Db; stripe: Stripe | null },
  operator: Operator,
  orderId: string,
): Promise<OrderView> {
  await voidOrderAndRefund(
    deps,
    async (tx) => {
      const order = await lockOrder(tx, { tenantId: operator.tenantId }, orderId);
      if (!order || order.channel !== 'pos') throw new AppError('order_not_found');
      await voidLockedOrder(tx, order, operator.keyId);
      return true;
    },
    orderId,
  );
  return (await loadOrderView(deps.db, orderId, operator.tenantId))!;
}
