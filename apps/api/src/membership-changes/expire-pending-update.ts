import type { Db } from '@booking/db';
import type Stripe from 'stripe';
import { lockMembershipBySubscription } from '../locks';
import { announceRequested, cancelPendingChange } from './change-events';

/**
 * `customer.subscription.pending_update_expired`: an upgrade made `now` whose invoice was not
 * paid in time; the provider dropped the update and the subscription kept its old price. The
 * pending change fails with membership.plan_change_cancelled (payment_failed), once: an exact
 * duplicate stops at provider_events (insert-first), another notification finds the change no
 * longer pending under the membership lock.
 */
export async function handlePendingUpdateExpired(
  db: Db,
  eventId: string,
  subscription: Stripe.Subscription,
): Promise<void> {
  await db.$transaction(async (tx) => {
    const first = await tx.$executeRaw`
      INSERT INTO provider_events (id, type) VALUES (${eventId}, 'customer.subscription.pending_update_expired')
      ON CONFLICT (id) DO NOTHING`;
    if (first === 0) return;
    const membership = await lockMembershipBySubscription(tx, subscription.id);
    if (!membership) return;
    const change = await tx.membershipChange.findFirst({
      where: { membershipId: membership.id, status: 'pending', kind: 'plan_change', timing: 'now' },
    });
    if (!change) return;
    // Subscribers hear of a change before they hear it failed.
    await announceRequested(tx, membership, change);
    await cancelPendingChange(tx, membership, change, 'payment_failed', null);
  });
}
