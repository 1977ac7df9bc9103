import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { lockMembership } from '../locks';
import type { MembershipActor } from '../memberships/membership-actor';
import { cancelPendingChange } from './change-events';
import { changeView } from './change-view';
import { swapSubscriptionPrice } from './swap-subscription-price';

/** A change whose provider call may still be running is left alone this long after it was asked for. */
const IN_FLIGHT_MS = 60_000;

/**
 * Withdraws the membership's pending `period_end` plan change: the subscription goes back to the
 * old price (no proration), then the change is cancelled with membership.plan_change_cancelled
 * (withdrawn), once however many withdrawals race (the status guard lets one through; the
 * others are 404 change_not_found). An upgrade made `now` is not withdrawn: it waits on its
 * invoice, and lapses (payment_failed) if that is not paid.
 */
export async function withdrawPlanChange(
  deps: { db: Db; stripe: Stripe | null },
  actor: MembershipActor,
  membershipId: string,
): Promise<ReturnType<typeof changeView>> {
  const { db, stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');
  const { change, subscriptionId } = await db.$transaction(async (tx) => {
    const membership = await lockMembership(tx, { tenantId: actor.tenantId }, membershipId);
    if (!membership) throw new AppError('membership_not_found');
    const change = await tx.membershipChange.findFirst({
      where: { membershipId: membership.id, status: 'pending', kind: 'plan_change' },
    });
    if (!change) throw new AppError('change_not_found', 'the membership has no pending plan change');
    if (change.timing === 'now') {
      throw new AppError(
        'change_not_allowed',
        'an upgrade made now waits for its invoice; it lapses by itself if the invoice is not paid',
      );
    }
    if (change.providerAppliedAt === null && Date.now() - change.createdAt.getTime() < IN_FLIGHT_MS) {
      throw new AppError('change_pending', 'the change is still being made; try again in a minute');
    }
    return { change, subscriptionId: membership.stripeSubscriptionId };
  });

  // Back to the old price whatever the provider was told: a swap to the price it has is harmless.
  if (subscriptionId && change.fromPriceId) {
    await swapSubscriptionPrice(
      stripe,
      subscriptionId,
      change.fromPriceId,
      'none',
      `membership-change-${change.id}-withdraw`,
    );
  }

  return db.$transaction(async (tx) => {
    const membership = (await lockMembership(tx, { tenantId: actor.tenantId }, membershipId))!;
    if (!(await cancelPendingChange(tx, membership, change, 'withdrawn', actor.keyId))) {
      throw new AppError('change_not_found', 'the change is no longer pending');
    }
    return changeView(await tx.membershipChange.findUniqueOrThrow({ where: { id: change.id } }));
  });
}
