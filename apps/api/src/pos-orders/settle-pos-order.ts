import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { lockGiftCards, lockOpenShift, lockOrder, lockWallets } from '../locks';
import { recordRetailDiscount } from '../membership-uses/retail-discount';
import type { Operator } from '../operators/api-key-auth';
import type { OrderView } from '../orders/order-schemas';
import { activatePosMemberships, lockOrderMemberships } from '../membership-sales/pos-membership-lines';
import { loadOrderView } from '../orders/order-view';
import { recordFunded } from '../wallets/wallet-events';
import { creditWallet, debitWallet, fundsExpiry } from '../wallets/wallet-ledger';

/**
 * Settles an open till order in one transaction: every held tender is captured (wallet value
 * leaves the wallet: wallet.spent; gift card value leaves the card: gift_card.redeemed), every
 * wallet load funds its wallet (wallet.funded), every membership line's membership is activated
 * (membership.activated, channel pos), and order.confirmed says what was paid.
 *
 * Tenders must cover the total, unless a manager confirms it unpaid: the order and its event
 * then say so (confirmed_unpaid, balance_due_cents), because confirmation alone does not prove
 * payment. An unpaid order never funds a wallet: that value would come from nowhere.
 *
 * Settling and voiding take the order's lock and need it open, so of the two only one wins.
 */
export async function settlePosOrder(
  deps: { db: Db; config: Config },
  operator: Operator,
  orderId: string,
  options: { unpaid: boolean },
): Promise<OrderView> {
  const pre = await deps.db.order.findFirst({ where: { id: orderId, tenantId: operator.tenantId, channel: 'pos' } });
  if (!pre) throw new AppError('order_not_found');
  return deps.db.$transaction(async (tx) => {
    if (pre.shiftId) await lockOpenShift(tx, operator.tenantId, pre.shiftId, 'share');
    const order = (await lockOrder(tx, { tenantId: operator.tenantId }, orderId))!;
    if (order.status !== 'open') throw new AppError('order_not_open', { status: order.status });
    const tenders = await tx.orderTender.findMany({
      where: { orderId, status: 'held' },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    const lines = await tx.orderLine.findMany({ where: { orderId }, orderBy: { position: 'asc' } });
    // A card tender partly refunded at Stripe before settling pays only what it kept.
    const paidCents = tenders.reduce((sum, tender) => sum + tender.amountCents - tender.refundedCents, 0);
    const balanceDue = order.totalCents - paidCents;
    if (balanceDue > 0 && !options.unpaid) {
      throw new AppError('order_not_fully_paid', { balance_due_cents: balanceDue, currency: order.currency });
    }
    const loads = lines.filter((line) => line.type === 'wallet_load');
    if (balanceDue > 0 && loads.length > 0) {
      throw new AppError('wallet_load_unpaid', { balance_due_cents: balanceDue });
    }
    // As for wallet loads: an unpaid membership is never activated. Its memberships are locked
    // after the order and before any wallet.
    if (balanceDue > 0 && lines.some((line) => line.type === 'membership')) {
      throw new AppError('membership_unpaid', { balance_due_cents: balanceDue });
    }
    const memberships = await lockOrderMemberships(tx, operator.tenantId, lines);

    // The member discount (fixed when the order was opened) becomes a use of its membership,
    // locked before any wallet.
    await recordRetailDiscount(tx, pre, operator.keyId);
    const wallets = await lockWallets(tx, [
      ...tenders.flatMap((tender) => (tender.walletId ? [tender.walletId] : [])),
      ...loads.map((line) => line.walletId!),
    ]);
    await lockGiftCards(
      tx,
      tenders.map((tender) => tender.giftCardId),
    );

    const now = new Date();
    for (const tender of tenders) {
      await tx.orderTender.update({ where: { id: tender.id }, data: { status: 'captured', capturedAt: now } });
      if (tender.walletId) {
        const wallet = wallets.get(tender.walletId)!;
        const refs = { orderId, tenderId: tender.id, actorKeyId: operator.keyId };
        await debitWallet(tx, wallet, { kind: 'capture', amountCents: tender.amountCents, fromHold: true, ...refs });
        await recordEvent(tx, {
          tenantId: operator.tenantId,
          name: 'wallet.spent',
          entityType: 'wallet',
          entityId: wallet.id,
          fields: {
            wallet_id: wallet.id,
            order_id: orderId,
            tender_id: tender.id,
            amount_cents: tender.amountCents,
            currency: wallet.currency,
            balance_cents: wallet.balanceCents,
            shift_id: order.shiftId!,
            actor_user_id: operator.keyId,
          },
        });
      } else if (tender.giftCardId) {
        await tx.giftCard.update({
          where: { id: tender.giftCardId },
          data: { balanceCents: { decrement: tender.amountCents }, heldCents: { decrement: tender.amountCents } },
        });
        await recordEvent(tx, {
          tenantId: operator.tenantId,
          name: 'gift_card.redeemed',
          entityType: 'order',
          entityId: orderId,
          fields: {
            gift_card_id: tender.giftCardId,
            order_id: orderId,
            amount_cents: tender.amountCents,
            currency: order.currency,
          },
        });
      }
    }

    for (const line of loads) {
      const wallet = wallets.get(line.walletId!)!;
      const expiresAt = fundsExpiry(now, deps.config.wallets.fundsExpiryDays);
      const { lotId } = await creditWallet(tx, wallet, {
        kind: 'fund',
        source: 'pos_load',
        amountCents: line.totalCents,
        expiresAt,
        orderId,
        actorKeyId: operator.keyId,
      });
      await recordFunded(tx, wallet, { orderId, lotId, amountCents: line.totalCents, expiresAt, channel: 'pos' });
    }

    await activatePosMemberships(tx, orderId, memberships, lines, now);

    await tx.order.update({
      where: { id: orderId },
      data: { status: 'confirmed', paidCents, confirmedUnpaid: balanceDue > 0, confirmedAt: now },
    });
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'order.confirmed',
      entityType: 'order',
      entityId: orderId,
      fields: {
        order_id: orderId,
        customer_id: order.customerId,
        shift_id: order.shiftId!,
        venue_id: order.venueId,
        total_cents: order.totalCents,
        paid_cents: paidCents,
        balance_due_cents: balanceDue,
        currency: order.currency,
        confirmed_unpaid: balanceDue > 0,
        tenders: tenders.map((tender) => ({
          tender_id: tender.id,
          type: tender.type,
          amount_cents: tender.amountCents - tender.refundedCents,
        })),
        actor_user_id: operator.keyId,
      },
    });
    return (await loadOrderView(tx, orderId, operator.tenantId))!;
  });
}
