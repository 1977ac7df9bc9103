import type { Db } from '@booking/db';
import { AppError, isTerminalMembership } from '@booking/domain';
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
 * invoice, and lapses (payment_failed) if that is not paid. If the renewal at the new price is
 * paid and applied while the old price is being put back, the change stands (404
 * change_not_found) and the subscription is put on the new price again.
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

  const outcome = await db.$transaction(async (tx) => {
    const membership = (await lockMembership(tx, { tenantId: actor.tenantId }, membershipId))!;
    if (await cancelPendingChange(tx, membership, change, 'withdrawn', actor.keyId)) {
      return {
        withdrawn: true as const,
        view: changeView(await tx.membershipChange.findUniqueOrThrow({ where: { id: change.id } })),
      };
    }
    // Not pending any more. If a renewal at the new price was paid and applied while the old
    // price went back to the provider, the membership is on the new plan: the provider must
    // bill the price the membership now has, not the one just swapped back.
    const now = await tx.membershipChange.findUniqueOrThrow({ where: { id: change.id } });
    const live = !isTerminalMembership(membership.status);
    return { withdrawn: false as const, applied: now.status === 'applied' && live ? membership.stripePriceId : null };
  });
  if (outcome.withdrawn) return outcome.view;
  if (subscriptionId && outcome.applied && outcome.applied !== change.fromPriceId) {
    await swapSubscriptionPrice(
      stripe,
      subscriptionId,
      outcome.applied,
      'none',
      `membership-change-${change.id}-withdraw-undone`,
    );
  }
  throw new AppError(
    'change_not_found',
    outcome.applied ? 'the change was applied by a renewal paid meanwhile' : 'the change is no longer pending',
  );
}
