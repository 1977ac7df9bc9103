import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import type { LockedMembership } from '../locks';
import { membershipRef } from '../memberships/membership-ref';
import { termExpiry } from './membership-term';

/**
 * Activates a paid fixed-term membership the caller has locked: active from `paidAt` for the
 * plan's term, with membership.activated in the caller's transaction. Only a pending_payment
 * membership moves (the UPDATE says so too), so a second attempt changes and records nothing.
 * Returns whether it activated.
 */
export async function activateMembership(
  tx: Tx,
  membership: LockedMembership,
  sale: { orderId: string; channel: 'online' | 'pos'; paidAt: Date; amountCents: number },
): Promise<boolean> {
  if (membership.status !== 'pending_payment' || membership.billing !== 'fixed_term') return false;
  const startsAt = sale.paidAt;
  const expiresAt = termExpiry(startsAt, membership.plan);
  const moved = await tx.membership.updateMany({
    where: { id: membership.id, status: 'pending_payment' },
    data: { status: 'active', startsAt, expiresAt, periodStart: startsAt },
  });
  if (moved.count === 0) return false;
  await recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.activated',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      order_id: sale.orderId,
      channel: sale.channel,
      starts_at: startsAt.toISOString(),
      expires_at: expiresAt.toISOString(),
      amount_cents: sale.amountCents,
      currency: membership.currency,
    },
  });
  return true;
}
