import type { Tx } from '@booking/db';
import { ANY_TENANT, lockOrder, lockWallet } from '../locks';
import { releaseWalletHold } from '../wallets/wallet-ledger';
import { handOverToDispute, releasedByFailedRefund } from './dispute-takeover';
import { returnFunding } from './funding-return';
import { recordOrderRefund } from './record-order-refund';
import { endRefundedMemberships, lockSoldMemberships } from './refunded-memberships';

/**
 * Settles a provider refund of an order that was waiting for the provider (an online top-up, a
 * till order's card tender, or a payment an online order could not keep: late-payment-refund.ts):
 * once, whichever of the refund's answer, its notification or a reconcile gets here first (only
 * a pending refund moves).
 *
 * - succeeded: refund.created; a funding refund takes its held value out of the wallet
 *   (wallet.funding_returned, and wallet.refund_review_required for a shortfall); a membership
 *   the order sold ends once the refunds reach it (membership.ended, reason refunded; see
 *   refunded-memberships.ts).
 * - failed: nothing left the account, so the held value is released and the refunded amounts the
 *   request had reserved are given back. No event. Except what a dispute took over while it was
 *   pending (dispute-takeover.ts): the chargeback gave that back, so it stays counted, and its
 *   held value leaves the wallet as the dispute's.
 */
export async function completeOrderRefund(
  tx: Tx,
  refundId: string,
  outcome: { status: 'succeeded' | 'failed'; providerRefundId: string | null },
): Promise<boolean> {
  const pending = await tx.orderRefund.findUnique({ where: { id: refundId }, include: { tender: true } });
  if (!pending) return false;
  const order = (await lockOrder(tx, ANY_TENANT, pending.orderId))!;
  const moved = await tx.orderRefund.updateMany({
    where: { id: refundId, status: 'pending' },
    data: {
      status: outcome.status,
      providerRefundId: outcome.providerRefundId ?? pending.providerRefundId,
      // A failed refund paid nothing out: a retry of its request may try again.
      ...(outcome.status === 'failed' && { idempotencyRef: null }),
    },
  });
  if (moved.count === 0) return false;

  // Memberships before wallets (house lock order); only a success can end one.
  const sold = outcome.status === 'succeeded' ? await lockSoldMemberships(tx, order.id) : [];
  const line = pending.lineId ? await tx.orderLine.findUnique({ where: { id: pending.lineId } }) : null;
  // A payment the order could not keep funded no wallet: there is nothing to take back.
  const fundedWalletId =
    pending.source === 'late_payment' ? null : order.channel === 'online' ? order.walletId : (line?.walletId ?? null);
  const wallet = fundedWalletId ? await lockWallet(tx, ANY_TENANT, fundedWalletId) : undefined;

  if (outcome.status === 'failed') {
    const released = await releasedByFailedRefund(tx, pending, pending.tender?.amountCents ?? order.paidCents);
    const takenOver = pending.amountCents - released;
    const handed = wallet && takenOver > 0 ? await handOverToDispute(tx, wallet, order, pending, takenOver) : 0;
    if (wallet && pending.debitedCents > handed) {
      await releaseWalletHold(tx, wallet, pending.debitedCents - handed, {
        orderId: order.id,
        refundId,
        reason: 'refund failed',
      });
    }
    if (released === 0) return true;
    await tx.order.update({ where: { id: order.id }, data: { refundedCents: { decrement: released } } });
    if (pending.tenderId) {
      await tx.orderTender.update({
        where: { id: pending.tenderId },
        data: { refundedCents: { decrement: released } },
      });
    }
    return true;
  }

  await recordOrderRefund(tx, {
    tenantId: order.tenantId,
    orderId: order.id,
    refundId,
    paymentIntentId: pending.tender?.paymentReference ?? order.paymentIntentId!,
    amountCents: pending.amountCents,
    reason: pending.reason,
  });
  await endRefundedMemberships(tx, order, sold, { disputed: false, actorKeyId: pending.actorKeyId });
  if (wallet) {
    if (line) {
      await tx.orderLine.update({
        where: { id: line.id },
        // The shortfall counts as returned too: it is recorded for review, never taken twice.
        data: { returnedCents: { increment: pending.debitedCents + pending.shortfallCents } },
      });
    }
    await returnFunding(tx, wallet, {
      orderId: order.id,
      refundId,
      amountCents: pending.debitedCents + pending.shortfallCents,
      debitedCents: pending.debitedCents,
      fromHold: true,
      channel: order.channel,
      reason: 'refund',
      actorKeyId: pending.actorKeyId ?? undefined,
    });
  }
  return true;
}
