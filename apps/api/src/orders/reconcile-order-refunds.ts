import type { Db, Prisma, Tx } from '@booking/db';
import { AppError, isUuid } from '@booking/domain';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { ANY_TENANT, lockOrder, lockWallet } from '../locks';
import { providerOutcome } from '../refunds/create-refund';
import { availableCents } from '../wallets/wallet-ledger';
import { completeOrderRefund } from './complete-order-refund';
import { givenBackCents } from './dispute-takeover';
import { returnFunding } from './funding-return';
import { bookLatePaymentRefund, isLatePaymentRefund } from './late-payment-refund';
import { clearIfRepaid } from './late-refund-flag';
import { loadFundingOf } from './load-funding';
import { recordOrderRefund } from './record-order-refund';
import { settleVoid } from './settle-void';
import { endRefundedMemberships, lockSoldMemberships } from './refunded-memberships';
import { idOf } from '../payments/stripe-ids';

/** The order a provider payment belongs to: an online order's PaymentIntent or a card tender's. */
export async function orderOfPayment(db: Db, paymentIntentId: string | null): Promise<string | null> {
  if (!paymentIntentId) return null;
  const order = await db.order.findUnique({ where: { paymentIntentId }, select: { id: true } });
  if (order) return order.id;
  const tender = await db.orderTender.findUnique({
    where: { paymentReference: paymentIntentId },
    select: { orderId: true },
  });
  return tender?.orderId ?? null;
}

type MoneyBack = { id: string; amount: number; paymentIntentId: string };
type OrderRefund = Prisma.OrderRefundGetPayload<object>;

/**
 * Refund and dispute notifications about an order's payment, each acting once (provider_events):
 *
 * - a refund this service asked for (its metadata names our order_refund_id) is settled by
 *   completeOrderRefund, if it was still pending; a void's by settleVoid, only when it succeeded;
 * - the refund of a payment an online order could not keep (metadata `automatic` and the order)
 *   is booked as it is reported (bookLatePaymentRefund): it may be notified before its call
 *   answers, and a pending one is settled here;
 * - a refund made in Stripe's dashboard, or a dispute, cannot be refused: it is recorded as an
 *   order refund, and for an online top-up the funding is taken back from the wallet as far as it
 *   is still there (wallet.funding_returned, and wallet.refund_review_required for what was
 *   already spent). Disputes carry reason `dispute`; one takes over what refunds still pending
 *   on its payment reserved (dispute-takeover.ts). A membership the order sold ends by the same
 *   rule as an operator's refund (refunded-memberships.ts); a dispute of an online membership
 *   order's payment ends it whatever the amount (reason `disputed`). Once such money repays an
 *   order flagged because its late payment's refund failed, the flag is cleared (late-refund-flag.ts).
 */
export async function reconcileOrderRefunds(
  db: Db,
  event: { id: string; type: string },
  orderId: string,
  items: { refunds: Stripe.Refund[] } | { dispute: Stripe.Dispute },
  logger?: Pick<Logger, 'warn'>,
): Promise<void> {
  await db.$transaction(async (tx) => {
    const first = await tx.$executeRaw`
      INSERT INTO provider_events (id, type) VALUES (${event.id}, ${event.type}) ON CONFLICT (id) DO NOTHING`;
    if (first === 0) return;
    if ('dispute' in items) {
      const dispute = items.dispute;
      await recordMoneyBack(tx, orderId, 'dispute', {
        id: dispute.id,
        amount: dispute.amount,
        paymentIntentId: idOf(dispute.payment_intent)!,
      });
      return;
    }
    for (const refund of items.refunds) {
      if (isLatePaymentRefund(refund, orderId)) {
        await bookLatePaymentRefund(tx, orderId, refund, logger);
        continue;
      }
      const ours = refund.metadata?.order_refund_id;
      if (ours && isUuid(ours)) {
        const row = await tx.orderRefund.findUnique({ where: { id: ours } });
        if (row) await settleRequested(tx, row, refund);
        continue;
      }
      if (refund.metadata?.automatic || refund.status !== 'succeeded') continue;
      await recordMoneyBack(tx, orderId, 'refund', moneyOf(refund));
    }
  });
}

/**
 * Money the provider gave back on its own: recorded once, by its provider id. The value it had
 * funded leaves the wallet as far as it is still there: an online top-up's, once paid (a payment
 * the order never kept funded nothing), or a confirmed till order's wallet load, by the same rule
 * as an operator's refund. A card tender of a till order still open no longer pays for it; one
 * of a voided order leaves that much less for the void's pending refund (shrinkPendingVoid).
 * Measured against what was given back for sure: what refunds still pending reserved is taken
 * over, counted and taken from the wallet by them meanwhile (dispute-takeover.ts).
 */
async function recordMoneyBack(tx: Tx, orderId: string, reason: 'refund' | 'dispute', money: MoneyBack): Promise<void> {
  const order = (await lockOrder(tx, ANY_TENANT, orderId))!;
  if (await tx.orderRefund.findUnique({ where: { providerRefundId: money.id } })) return;
  // Its payment is not recorded yet (notifications arrive in any order): refusing makes the
  // provider notify again later, and nothing of this one is kept.
  if (order.status === 'pending_payment') {
    throw new AppError('service_unavailable', 'the payment of this order is not recorded yet; notify again');
  }
  const tender = await tx.orderTender.findUnique({ where: { paymentReference: money.paymentIntentId } });
  // Memberships the order sold, before its wallet (house lock order).
  const sold = await lockSoldMemberships(tx, order.id);
  const cause = { disputed: reason === 'dispute', actorKeyId: null };

  // Never more than is left to give back for sure: the provider has no more to give. Refunds of
  // ours still pending do not shrink it: a dispute takes them over (dispute-takeover.ts).
  const paid = tender ? tender.amountCents : order.paidCents;
  const refundable = paid - (await givenBackCents(tx, { orderId: order.id, tenderId: tender?.id ?? null }));
  const amount = Math.min(money.amount, refundable);
  if (amount <= 0) {
    // Already given back in full. A chargeback still repaid the payer (Stripe takes disputes of
    // refunded charges) if a late payment's refund, the one refund of ours Stripe may reverse
    // after its success, gave it back: its row is kept, counting nothing, so that reversal sees
    // the dispute gave the money back (releasedByFailedRefund). It still ends an online
    // membership order's membership.
    if (reason === 'dispute' && (await reversible(tx, order.id))) {
      await tx.orderRefund.create({ data: moneyBackRow(order, tender?.id ?? null, reason, money, money.amount) });
    }
    return endRefundedMemberships(tx, order, sold, cause);
  }
  // What those pending refunds reserved is counted already, and the value they take back is held:
  // only the rest is counted here, and taken back from the wallet.
  const fresh = Math.min(amount, paid - (tender ? tender.refundedCents : order.refundedCents));

  let funded: { walletId: string; lineId: string | null; fundingCents: number } | null = null;
  if (fresh > 0 && order.channel === 'online' && order.status === 'paid' && order.walletId) {
    funded = { walletId: order.walletId, lineId: null, fundingCents: fresh };
  } else if (fresh > 0 && order.channel === 'pos' && order.status === 'confirmed') {
    const load = await loadFundingOf(tx, order, fresh);
    if (load) funded = { walletId: load.line.walletId, lineId: load.line.id, fundingCents: load.fundingCents };
  }
  const wallet = funded ? await lockWallet(tx, ANY_TENANT, funded.walletId) : undefined;
  const debited = wallet ? Math.min(availableCents(wallet), funded!.fundingCents) : 0;

  const refund = await tx.orderRefund.create({
    data: {
      // A chargeback's row carries all it gave the payer, even past what was left to give back
      // for sure; only `amount` is counted. Stripe refunds no more than the charge.
      ...moneyBackRow(order, tender?.id ?? null, reason, money, reason === 'dispute' ? money.amount : amount),
      lineId: funded?.lineId ?? null,
      debitedCents: debited,
      shortfallCents: funded ? funded.fundingCents - debited : 0,
    },
  });
  // What the order counts as paid and refunded: nothing for a till order not yet settled.
  const counted = Math.min(fresh, order.paidCents - order.refundedCents);
  if (counted > 0) await tx.order.update({ where: { id: order.id }, data: { refundedCents: { increment: counted } } });
  if (tender) {
    await tx.orderTender.update({
      where: { id: tender.id },
      data: {
        refundedCents: { increment: fresh },
        // All of it given back: it no longer pays for the open order. A part given back lowers
        // what it pays (settling counts amount - refunded; voiding refunds the rest).
        ...(order.status === 'open' &&
          tender.status === 'held' &&
          amount >= refundable && { status: 'released', releasedAt: new Date() }),
      },
    });
    await shrinkPendingVoid(tx, tender.id, amount);
  }
  if (reason === 'refund') {
    await recordOrderRefund(tx, {
      tenantId: order.tenantId,
      orderId: order.id,
      refundId: refund.id,
      paymentIntentId: money.paymentIntentId,
      amountCents: amount,
      reason: refund.reason,
    });
  }
  await endRefundedMemberships(tx, order, sold, cause);
  if (wallet && funded) {
    if (funded.lineId) {
      await tx.orderLine.update({
        where: { id: funded.lineId },
        data: { returnedCents: { increment: funded.fundingCents } },
      });
    }
    await returnFunding(tx, wallet, {
      orderId: order.id,
      refundId: refund.id,
      amountCents: funded.fundingCents,
      debitedCents: debited,
      fromHold: false,
      channel: order.channel,
      reason,
    });
  }
  await clearIfRepaid(tx, order);
}

/**
 * A refund this service asked the provider for, as the provider now reports it. A void's is
 * settled only by its success (settleVoid): one that failed stays pending, and the
 * abandoned-orders job asks again. Any other is settled by completeOrderRefund when final; while
 * pending, its provider id is kept.
 */
async function settleRequested(tx: Tx, row: OrderRefund, refund: Stripe.Refund): Promise<void> {
  const { status } = providerOutcome(refund);
  if (row.source === 'void') {
    if (status === 'succeeded') await settleVoid(tx, row, refund);
    return;
  }
  if (status !== 'pending') {
    await completeOrderRefund(tx, row.id, { status, providerRefundId: refund.id });
    return;
  }
  await tx.orderRefund.updateMany({
    where: { id: row.id, providerRefundId: null },
    data: { providerRefundId: refund.id },
  });
}

/**
 * Money given back on a voided order's card payment by something other than the void's refund
 * leaves less for the void to give back: its pending refund shrinks by that much, and ends
 * failed (it gave nothing back itself) once nothing is left for it, so the job stops asking.
 */
async function shrinkPendingVoid(tx: Tx, tenderId: string, givenBack: number): Promise<void> {
  const pending = await tx.orderRefund.findFirst({ where: { tenderId, source: 'void', status: 'pending' } });
  if (!pending) return;
  const left = pending.amountCents - givenBack;
  await tx.orderRefund.update({
    where: { id: pending.id },
    data: left > 0 ? { amountCents: left } : { status: 'failed' },
  });
}

/** Whether a late payment's refund succeeded on the order (bookLatePaymentRefund may reverse it). */
const reversible = async (tx: Tx, orderId: string): Promise<boolean> =>
  (await tx.orderRefund.count({ where: { orderId, source: 'late_payment', status: 'succeeded' } })) > 0;

/** The row of money the provider gave back on its own, for `amountCents`. */
const moneyBackRow = (
  order: { tenantId: string; id: string },
  tenderId: string | null,
  reason: 'refund' | 'dispute',
  money: MoneyBack,
  amountCents: number,
) => ({
  tenantId: order.tenantId,
  orderId: order.id,
  tenderId,
  source: reason === 'dispute' ? ('dispute' as const) : ('provider' as const),
  status: 'succeeded' as const,
  amountCents,
  reason: reason === 'dispute' ? 'disputed by the payer' : 'refunded at the provider',
  providerRefundId: money.id,
});

const moneyOf = (refund: Stripe.Refund): MoneyBack => ({
  id: refund.id,
  amount: refund.amount,
  paymentIntentId: idOf(refund.payment_intent)!,
});
