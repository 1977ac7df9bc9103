import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import { Prisma, type Db, type Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import type Stripe from 'stripe';
import { lockGiftCard, lockOpenShift, lockOrder, lockWallets, type LockedOrder, type LockedWallet } from '../locks';
import { assertRole, type Operator } from '../operators/api-key-auth';
import { availableCents, creditWallet, fundsExpiry, holdWalletValue } from '../wallets/wallet-ledger';
import { askProviderRefund, settleOrAskAgain } from './ask-provider-refund';
import { returnFunding } from './funding-return';
import { loadFundingOf } from './load-funding';
import type { OrderRefundView, RefundOrderRequest } from './order-schemas';
import { loadOrderView } from './order-view';
import { endRefundedMemberships, lockSoldMemberships } from './refunded-memberships';

type Deps = { db: Db; stripe: Stripe | null; config: Config };

/** What the first transaction decided: done, or a provider refund to ask for. */
type Planned = { refundId: string; provider: null } | { refundId: string; provider: { paymentIntentId: string } };

/**
 * A manager refunds an order, through one tender (manager+; an admin may allow a shortfall).
 *
 * - An online top-up is refunded through Stripe, and its funding taken back from the wallet as
 *   far as it is still there. Above what is left the refund is refused (409
 *   refund_exceeds_available) unless an admin allows the shortfall. The value taken back is held
 *   while Stripe works, so it cannot be spent meanwhile.
 * - An online fixed-term membership order is refunded through Stripe; once the refunds reach the
 *   amount paid the membership ends with the refund's success (refunded-memberships.ts). A
 *   recurring membership order is refused: a subscription is ended by cancelling the membership.
 * - A till order is refunded through the tender named: a wallet tender credits the same wallet
 *   (wallet.refunded), a gift card tender goes back on its card, cash is paid out of an open
 *   shift, a card tender is refunded through Stripe (refund.created). Once the refunds reach
 *   beyond the order's other lines into a wallet load, that funding is taken back too, by the
 *   same rule (load-funding.ts). A membership line's membership ends once the refunds reach
 *   beyond the other lines to the line's whole value (refunded-memberships.ts).
 *
 * Refunded amounts are raised under the order's lock before the provider is asked, so two
 * refunds at once can never give back more than was paid. One Stripe never answered stays
 * pending, its value held, until its notification, a retry of the request or the
 * settle-stuck-order-refunds job settles it (ask-provider-refund.ts).
 */
export async function refundOrder(
  deps: Deps,
  operator: Operator,
  orderId: string,
  request: RefundOrderRequest,
  idempotencyRef?: string,
): Promise<{ refund: OrderRefundView; replayed: boolean }> {
  if (request.allow_shortfall) assertRole(operator, 'admin', 'allowing a shortfall');
  // A retry of a request whose refund was made already (its answer was lost, or it failed after
  // the first transaction) gets that refund rather than a second payout.
  const earlier =
    idempotencyRef === undefined
      ? null
      : await deps.db.orderRefund.findFirst({
          where: { idempotencyRef, tenantId: operator.tenantId, orderId },
          include: { tender: { select: { paymentReference: true } }, order: { select: { paymentIntentId: true } } },
        });
  if (earlier) {
    // Stripe's answer never heard (the first run died or gave up): settled from Stripe's own
    // record of it, or sent again if Stripe has none.
    const paymentIntentId = earlier.tender?.paymentReference ?? earlier.order.paymentIntentId;
    if (earlier.status === 'pending' && earlier.providerRefundId === null && paymentIntentId && deps.stripe) {
      await settleOrAskAgain(deps.db, deps.stripe, {
        tenantId: operator.tenantId,
        orderId,
        refundId: earlier.id,
        paymentIntentId,
        providerRefundId: null,
      });
    }
    return { refund: await refundView(deps.db, operator, orderId, earlier.id), replayed: true };
  }
  const found = await deps.db.order.findFirst({
    where: { id: orderId, tenantId: operator.tenantId },
    include: { tenders: { select: { id: true, type: true, status: true } } },
  });
  if (!found) throw new AppError('order_not_found');
  if (found.kind === 'membership' && found.channel === 'online') await refuseSubscription(deps.db, found);
  // Checked again under the order's lock; here it spares a tender lookup on an order with none.
  if (found.status !== (found.channel === 'online' ? 'paid' : 'confirmed')) {
    throw new AppError('order_not_refundable', { status: found.status });
  }
  const tender = found.channel === 'pos' ? pickTender(found.tenders, request.tender_id) : null;
  if (tender?.type === 'card' || found.channel === 'online') {
    if (!deps.stripe) throw new AppError('payments_not_configured', 'card refunds go through Stripe');
  }

  const planned = await deps.db.$transaction(async (tx): Promise<Planned> => {
    if (tender?.type === 'cash') {
      const shiftId = request.shift_id ?? found.shiftId;
      if (!shiftId) throw new AppError('shift_not_found');
      await lockOpenShift(tx, operator.tenantId, shiftId, 'share');
    }
    const order = (await lockOrder(tx, { tenantId: operator.tenantId }, orderId))!;
    const refundId = randomUUID();
    const made =
      order.channel === 'online'
        ? await planOnlineRefund(tx, operator, order, request, refundId)
        : await refundTillTender(tx, deps, operator, order, tender!.id, request, refundId);
    if (idempotencyRef !== undefined) await nameRequest(tx, refundId, idempotencyRef);
    return made;
  });

  if (planned.provider) {
    await askProviderRefund(deps.db, deps.stripe!, {
      tenantId: operator.tenantId,
      orderId,
      refundId: planned.refundId,
      paymentIntentId: planned.provider.paymentIntentId,
    });
  }
  return { refund: await refundView(deps.db, operator, orderId, planned.refundId), replayed: false };
}

/** Records the request that made the refund (order_refunds.idempotency_ref is unique). */
async function nameRequest(tx: Tx, refundId: string, idempotencyRef: string): Promise<void> {
  try {
    await tx.orderRefund.update({ where: { id: refundId }, data: { idempotencyRef } });
  } catch (error) {
    // Another run of the same request made its refund a moment ago.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
      throw new AppError('idempotency_request_in_progress');
    }
    throw error;
  }
}

async function refundView(db: Db, operator: Operator, orderId: string, refundId: string): Promise<OrderRefundView> {
  const view = (await loadOrderView(db, orderId, operator.tenantId))!;
  return (view.refunds as OrderRefundView[]).find((refund) => refund.refund_id === refundId)!;
}

/** The tender named, or the order's only captured one; a released tender has nothing to refund. */
function pickTender<T extends { id: string; type: string; status: string }>(tenders: T[], tenderId?: string): T {
  if (tenderId !== undefined) {
    const tender = tenders.find((candidate) => candidate.id === tenderId);
    if (!tender) throw new AppError('tender_not_found', 'no tender of this order has this id');
    if (tender.status !== 'captured') throw new AppError('tender_not_refundable', { status: tender.status });
    return tender;
  }
  const captured = tenders.filter((tender) => tender.status === 'captured');
  // A till order confirmed unpaid may have taken no money at all.
  if (captured.length === 0) throw new AppError('refund_exceeds_paid', { refundable_cents: 0 });
  if (captured.length !== 1) {
    throw new AppError('invalid_body', [
      { field: '/tender_id', message: `is required: the order has ${captured.length} captured tenders` },
    ]);
  }
  return captured[0]!;
}

/** Reserves an online top-up's refund: the money to ask Stripe for, the value to take back. */
async function planOnlineRefund(
  tx: Tx,
  operator: Operator,
  order: LockedOrder,
  request: RefundOrderRequest,
  refundId: string,
): Promise<Planned> {
  const sellsMembership = order.kind === 'membership' && order.paymentIntentId !== null;
  if (order.status !== 'paid' || !(order.walletId || sellsMembership)) {
    throw new AppError('order_not_refundable', { status: order.status });
  }
  if (request.tender_id !== undefined || request.line_id !== undefined) {
    throw new AppError('invalid_body', [{ field: '/tender_id', message: 'is for till orders only' }]);
  }
  assertRefundable(order.paidCents - order.refundedCents, request.amount_cents);
  // A membership order funded no wallet: only the money goes back (the membership ends, if at
  // all, when the refund succeeds).
  const wallet = order.walletId ? (await lockWallets(tx, [order.walletId])).get(order.walletId)! : null;
  const debited = wallet ? takeBack(wallet, request.amount_cents, request.allow_shortfall === true) : 0;
  await tx.orderRefund.create({
    data: {
      id: refundId,
      tenantId: order.tenantId,
      orderId: order.id,
      source: 'operator',
      status: 'pending',
      amountCents: request.amount_cents,
      debitedCents: debited,
      shortfallCents: request.amount_cents - debited,
      reason: request.reason ?? null,
      actorKeyId: operator.keyId,
    },
  });
  if (wallet && debited > 0) {
    await holdWalletValue(tx, wallet, debited, { orderId: order.id, refundId, actorKeyId: operator.keyId });
  }
  await tx.order.update({ where: { id: order.id }, data: { refundedCents: { increment: request.amount_cents } } });
  return { refundId, provider: { paymentIntentId: order.paymentIntentId! } };
}

/** Refunds a till order's tender: at once for wallet, gift card and cash; card through Stripe. */
async function refundTillTender(
  tx: Tx,
  deps: Deps,
  operator: Operator,
  order: LockedOrder,
  tenderId: string,
  request: RefundOrderRequest,
  refundId: string,
): Promise<Planned> {
  if (order.status !== 'confirmed') throw new AppError('order_not_refundable', { status: order.status });
  const tender = await tx.orderTender.findUniqueOrThrow({ where: { id: tenderId } });
  if (tender.status !== 'captured') throw new AppError('tender_not_refundable', { status: tender.status });
  assertRefundable(tender.amountCents - tender.refundedCents, request.amount_cents);

  const load = await loadFundingOf(tx, order, request.amount_cents, request.line_id);
  const isCard = tender.type === 'card';
  // A refund settled now may end a membership the order sold: locked before the wallets.
  const sold = isCard ? [] : await lockSoldMemberships(tx, order.id);
  const wallets = await lockWallets(
    tx,
    [tender.walletId, load?.line.walletId].filter((id): id is string => !!id),
  );
  if (tender.giftCardId) await lockGiftCard(tx, tender.giftCardId);

  // The funding the order's wallet_load line put in its wallet, as far as this refund reaches it.
  const fundedWallet = load ? wallets.get(load.line.walletId)! : null;
  const funding = load?.fundingCents ?? 0;
  const debited = fundedWallet ? takeBack(fundedWallet, funding, request.allow_shortfall === true) : 0;
  const cashShift = tender.type === 'cash' ? (request.shift_id ?? order.shiftId) : null;

  await tx.orderRefund.create({
    data: {
      id: refundId,
      tenantId: order.tenantId,
      orderId: order.id,
      tenderId: tender.id,
      lineId: load?.line.id ?? null,
      source: 'operator',
      status: isCard ? 'pending' : 'succeeded',
      amountCents: request.amount_cents,
      debitedCents: debited,
      shortfallCents: funding - debited,
      reason: request.reason ?? null,
      shiftId: cashShift,
      actorKeyId: operator.keyId,
    },
  });
  await tx.orderTender.update({
    where: { id: tender.id },
    data: { refundedCents: { increment: request.amount_cents } },
  });
  await tx.order.update({ where: { id: order.id }, data: { refundedCents: { increment: request.amount_cents } } });

  if (isCard) {
    // The funded value is held until Stripe answers, then taken (or released) by completeOrderRefund.
    if (fundedWallet && debited > 0) {
      await holdWalletValue(tx, fundedWallet, debited, { orderId: order.id, refundId, actorKeyId: operator.keyId });
    }
    return { refundId, provider: { paymentIntentId: tender.paymentReference! } };
  }

  if (tender.walletId)
    await refundToWallet(tx, deps, operator, wallets.get(tender.walletId)!, order, tender.id, refundId, request);
  if (tender.giftCardId) {
    await tx.giftCard.update({
      where: { id: tender.giftCardId },
      data: { balanceCents: { increment: request.amount_cents } },
    });
  }
  if (fundedWallet && load) {
    // The shortfall counts as returned too: it is recorded for review, never taken twice.
    await tx.orderLine.update({ where: { id: load.line.id }, data: { returnedCents: { increment: funding } } });
    await returnFunding(tx, fundedWallet, {
      orderId: order.id,
      refundId,
      amountCents: funding,
      debitedCents: debited,
      fromHold: false,
      channel: 'pos',
      reason: 'refund',
      actorKeyId: operator.keyId,
    });
  }
  await endRefundedMemberships(tx, order, sold, { disputed: false, actorKeyId: operator.keyId });
  return { refundId, provider: null };
}

/**
 * A recurring membership order is paid by its subscription's invoices, not by a payment of the
 * order: it is not refunded here (409 order_not_refundable); the subscription is ended with the
 * membership's cancel route.
 */
async function refuseSubscription(
  db: Db,
  order: { status: string; membershipId: string | null; stripeSubscriptionId: string | null },
): Promise<void> {
  const membership = order.membershipId
    ? await db.membership.findUnique({ where: { id: order.membershipId }, select: { billing: true } })
    : null;
  if (order.stripeSubscriptionId === null && membership?.billing !== 'recurring') return;
  throw new AppError('order_not_refundable', {
    status: order.status,
    membership_id: order.membershipId,
    message: `a subscription is ended with POST /api/v1/memberships/${order.membershipId}/cancel; refunds of its invoices are not made here`,
  });
}

/** A wallet tender's refund goes back to the same wallet, as a new lot. */
async function refundToWallet(
  tx: Tx,
  deps: Deps,
  operator: Operator,
  wallet: LockedWallet,
  order: LockedOrder,
  tenderId: string,
  refundId: string,
  request: RefundOrderRequest,
): Promise<void> {
  await creditWallet(tx, wallet, {
    kind: 'refund_credit',
    source: 'refund_credit',
    amountCents: request.amount_cents,
    expiresAt: fundsExpiry(new Date(), deps.config.wallets.fundsExpiryDays),
    orderId: order.id,
    tenderId,
    refundId,
    actorKeyId: operator.keyId,
    reason: request.reason,
  });
  await recordEvent(tx, {
    tenantId: order.tenantId,
    name: 'wallet.refunded',
    entityType: 'wallet',
    entityId: wallet.id,
    fields: {
      wallet_id: wallet.id,
      order_id: order.id,
      tender_id: tenderId,
      refund_id: refundId,
      amount_cents: request.amount_cents,
      currency: wallet.currency,
      balance_cents: wallet.balanceCents,
      reason: request.reason ?? null,
      actor_user_id: operator.keyId,
    },
  });
}

function assertRefundable(refundableCents: number, amountCents: number): void {
  if (amountCents > refundableCents) throw new AppError('refund_exceeds_paid', { refundable_cents: refundableCents });
}

/** How much of `amount` the wallet still has to give back; the rest is a shortfall an admin must allow. */
function takeBack(wallet: LockedWallet, amountCents: number, allowShortfall: boolean): number {
  const debited = Math.min(availableCents(wallet), amountCents);
  if (debited < amountCents && !allowShortfall) {
    throw new AppError('refund_exceeds_available', {
      available_cents: availableCents(wallet),
      currency: wallet.currency,
    });
  }
  return debited;
}
