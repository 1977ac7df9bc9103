import type { Tx } from '@booking/db';
import type { LockedOrder, LockedWallet } from '../locks';
import { returnFunding } from './funding-return';

// A dispute of a payment while refunds of ours are still pending on it. Those refunds reserved
// their amounts when they were asked for (the order's and the tender's refunded_cents, and the
// value they take back held in the wallet), but the chargeback repays the payer whatever they
// were to give back, and Stripe then fails them (failure_reason
// charge_for_pending_refund_disputed). So a dispute is measured against the money given back for
// sure, and takes over what it overlaps of those reservations: counted once while the refunds
// are pending, and still given back once they fail.

/** One payment of an order: an online order's own (no tender), or one till tender's. */
export interface OrderPayment {
  orderId: string;
  tenderId: string | null;
}

/** Money given back for sure on the payment: its succeeded refunds, dashboard refunds and disputes. */
export async function givenBackCents(tx: Tx, payment: OrderPayment): Promise<number> {
  const back = await tx.orderRefund.aggregate({
    where: { orderId: payment.orderId, tenderId: payment.tenderId, status: 'succeeded' },
    _sum: { amountCents: true },
  });
  return back._sum.amountCents ?? 0;
}

/**
 * What a refund that gave nothing back (failed at the provider, or refused) releases of the
 * amount it reserved: all of it, less what a dispute took over while it was pending. The payment's
 * other money back (given back for sure, or still reserved: a void's pending refund reserves
 * nothing) and this refund's amount can only pass what the payment paid (`paidCents`) by what a
 * dispute took over.
 */
export async function releasedByFailedRefund(
  tx: Tx,
  refund: OrderPayment & { id: string; amountCents: number },
  paidCents: number,
): Promise<number> {
  const others = await tx.orderRefund.aggregate({
    where: {
      orderId: refund.orderId,
      tenderId: refund.tenderId,
      id: { not: refund.id },
      OR: [{ status: 'succeeded' }, { status: 'pending', source: { not: 'void' } }],
    },
    _sum: { amountCents: true },
  });
  const takenOver = Math.max(0, (others._sum.amountCents ?? 0) + refund.amountCents - paidCents);
  return refund.amountCents - Math.min(takenOver, refund.amountCents);
}

/**
 * The value a failed refund held in the wallet, for the part of it taken over (`takenOverCents`)
 * by money the provider gave back on its own meanwhile (a dispute, or a refund in its dashboard:
 * recordMoneyBack measures both against the money given back for sure), leaves the wallet as that
 * money's: wallet.funding_returned (reason dispute or refund, its row's id), and
 * wallet.refund_review_required for the part the refund had allowed as a shortfall. The newest
 * such row on the payment counts it. Never more than the refund's wallet_load line has left to
 * return. Returns what was taken from the hold; the caller releases the rest. The caller holds
 * the order and wallet locks.
 */
export async function handOverToDispute(
  tx: Tx,
  wallet: LockedWallet,
  order: LockedOrder,
  refund: OrderPayment & { lineId: string | null; debitedCents: number; shortfallCents: number },
  takenOverCents: number,
): Promise<number> {
  const line = refund.lineId ? await tx.orderLine.findUnique({ where: { id: refund.lineId } }) : null;
  const lineLeft = line ? line.totalCents - line.returnedCents : Infinity;
  const funding = Math.min(refund.debitedCents + refund.shortfallCents, takenOverCents, lineLeft);
  const takenBy =
    funding > 0
      ? await tx.orderRefund.findFirst({
          where: {
            orderId: refund.orderId,
            tenderId: refund.tenderId,
            source: { in: ['dispute', 'provider'] },
            status: 'succeeded',
          },
          orderBy: { createdAt: 'desc' },
        })
      : null;
  if (!takenBy) return 0;
  const debited = Math.min(refund.debitedCents, funding);
  await tx.orderRefund.update({
    where: { id: takenBy.id },
    data: {
      debitedCents: { increment: debited },
      shortfallCents: { increment: funding - debited },
      lineId: takenBy.lineId ?? refund.lineId,
    },
  });
  if (line) await tx.orderLine.update({ where: { id: line.id }, data: { returnedCents: { increment: funding } } });
  await returnFunding(tx, wallet, {
    orderId: order.id,
    refundId: takenBy.id,
    amountCents: funding,
    debitedCents: debited,
    fromHold: true,
    channel: order.channel,
    reason: takenBy.source === 'dispute' ? 'dispute' : 'refund',
  });
  return debited;
}
