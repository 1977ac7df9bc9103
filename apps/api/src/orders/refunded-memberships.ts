import type { OrderChannel, Tx } from '@booking/db';
import { membershipAllows } from '@booking/domain';
import { ANY_TENANT, lockMembership, type LockedMembership } from '../locks';
import { recordEnded } from '../membership-billing/billing-events';
import { closeEndedMembership } from '../membership-billing/close-ended-membership';

/** A fixed-term membership an order's membership line sold, with the line's value. */
export interface SoldMembership {
  lineTotalCents: number;
  membership: LockedMembership;
}

/**
 * Locks the memberships an order's `membership` lines sold (an online membership order has one
 * such line; a till order any number), in id order. Call with the order locked and before any
 * wallet of the order (house lock order: order → membership → wallet). Recurring memberships are
 * left out: a subscription is ended by cancelling it, never by a refund of an order.
 */
export async function lockSoldMemberships(tx: Tx, orderId: string): Promise<SoldMembership[]> {
  const lines = await tx.orderLine.findMany({
    where: { orderId, type: 'membership', membershipId: { not: null } },
    select: { membershipId: true, totalCents: true },
    orderBy: { membershipId: 'asc' },
  });
  const sold: SoldMembership[] = [];
  for (const line of lines) {
    const membership = await lockMembership(tx, ANY_TENANT, line.membershipId!);
    if (membership?.billing === 'fixed_term') sold.push({ lineTotalCents: line.totalCents, membership });
  }
  return sold;
}

/**
 * Ends the memberships an order sold once its refunds reach them, in the transaction that records
 * the refund as succeeded. The rule is the one wallet loads follow (load-funding.ts): refunds give
 * back the order's other lines first, so a membership line is given back once the order's
 * succeeded refunds, beyond the value of its other lines, reach the line's value. For an online
 * membership order (one line, nothing else) that is a refund of the whole amount paid; a smaller
 * refund is a goodwill gesture and keeps the membership. A dispute of an online membership order's
 * payment ends it whatever its amount.
 *
 * Only a live paid membership ends (active, frozen): status ended, ended_at, end_reason
 * `refunded` (or `disputed`), membership.ended with paid_through = the time it ended, and what
 * it still had open (a freeze, a pending change) is closed with it. A membership already ended,
 * expired or cancelled is left alone, so a repeated or concurrent notification ends it once
 * (the caller holds the order lock, and the membership locks from lockSoldMemberships).
 */
export async function endRefundedMemberships(
  tx: Tx,
  order: { id: string; channel: OrderChannel; totalCents: number },
  sold: SoldMembership[],
  cause: { disputed: boolean; actorKeyId: string | null },
): Promise<void> {
  if (sold.length === 0) return;
  const refunds = await tx.orderRefund.aggregate({
    where: { orderId: order.id, status: 'succeeded', source: { in: ['operator', 'provider', 'dispute'] } },
    _sum: { amountCents: true },
  });
  const refundedCents = refunds._sum.amountCents ?? 0;
  for (const { lineTotalCents, membership } of sold) {
    const current = await tx.membership.findUniqueOrThrow({ where: { id: membership.id } });
    if (!membershipAllows(current.status, 'cancel')) continue;
    const otherLines = order.totalCents - lineTotalCents;
    const reached = refundedCents - otherLines >= lineTotalCents;
    if (!reached && !(cause.disputed && order.channel === 'online')) continue;

    const endedAt = new Date();
    const reason = cause.disputed ? 'disputed' : 'refunded';
    const ended = await tx.membership.update({
      where: { id: membership.id },
      data: { status: 'ended', endedAt, endReason: reason },
    });
    await recordEnded(tx, ended, { reason, endedAt, paidThrough: endedAt, actorKeyId: cause.actorKeyId });
    await closeEndedMembership(tx, ended, endedAt);
  }
}
