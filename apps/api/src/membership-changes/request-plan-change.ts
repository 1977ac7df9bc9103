import { randomUUID } from 'node:crypto';
import { Prisma, type Db, type MembershipChange } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import type Stripe from 'stripe';
import { lockMembership } from '../locks';
import { subscriptionPeriod } from '../membership-billing/billing-facts';
import type { MembershipActor } from '../memberships/membership-actor';
import { announceRequested } from './change-events';
import type { PlanChangeRequest } from './change-schemas';
import { changeView } from './change-view';
import { swapSubscriptionPrice } from './swap-subscription-price';

/**
 * A member (or staff for them) asks to move a recurring membership to another recurring plan of
 * the same currency and billing interval.
 *
 * Three steps, so no membership lock waits on the provider: the change row is written pending
 * (without an event: nobody hears of it yet), the subscription is told (idempotency key from
 * the change id), then the change is stamped provider_applied_at (a `period_end` change's
 * effective_at made the end of the period the answered subscription is in) and
 * membership.plan_change_requested is recorded. If the provider refuses or cannot be reached,
 * the change is marked failed silently and the answer is the provider's error. The pending row
 * is what keeps a second request out (409 change_pending), with the partial unique index
 * membership_changes_one_pending as the backstop.
 */
export async function requestPlanChange(
  deps: { db: Db; stripe: Stripe | null },
  actor: MembershipActor,
  membershipId: string,
  request: PlanChangeRequest,
): Promise<ReturnType<typeof changeView>> {
  const { db, stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');

  const { change, subscriptionId } = await db.$transaction(async (tx) => {
    const membership = await lockMembership(tx, { tenantId: actor.tenantId }, membershipId);
    if (!membership) throw new AppError('membership_not_found');
    if (membership.billing !== 'recurring') {
      throw new AppError(
        'change_not_allowed',
        'a fixed-term membership does not change plan: sell the other plan as a new membership',
      );
    }
    const to = await tx.membershipPlan.findFirst({ where: { id: request.to_plan_id, tenantId: actor.tenantId } });
    if (!to) throw new AppError('membership_plan_not_found');
    if (to.id === membership.planId) throw new AppError('change_not_allowed', 'the membership is on this plan already');
    if (!to.active) throw new AppError('plan_not_active');
    if (
      to.billing !== 'recurring' ||
      !to.stripePriceId ||
      to.currency !== membership.currency ||
      to.interval !== membership.plan.interval ||
      to.intervalCount !== membership.plan.intervalCount
    ) {
      throw new AppError(
        'plan_invalid',
        'the new plan must be recurring with the same currency and billing interval; to change the interval, end the membership and buy the other plan',
      );
    }
    assertMembershipAllows(membership.status, 'changePlan');
    if (!membership.stripeSubscriptionId || membership.expiresAt === null) {
      throw new AppError('change_not_allowed', 'the membership has no subscription to change');
    }
    if (membership.cancelAtPeriodEnd || membership.endRequestedAt !== null) {
      throw new AppError('change_not_allowed', 'the membership ends at the end of its period');
    }
    if (request.when === 'now' && to.priceCents <= membership.priceCents) {
      throw new AppError('change_not_allowed', 'only an upgrade (a higher price) takes effect now; use period_end');
    }
    const freezes = await tx.membershipFreeze.count({
      where: { membershipId: membership.id, status: { in: ['booked', 'active'] } },
    });
    if (freezes > 0) throw new AppError('change_not_allowed', 'a freeze is booked or running: cancel it first');
    const pending = await tx.membershipChange.findFirst({ where: { membershipId: membership.id, status: 'pending' } });
    if (pending) throw new AppError('change_pending', { change_id: pending.id, kind: pending.kind });

    const change = await insertPending(tx, {
      id: randomUUID(),
      membershipId: membership.id,
      kind: 'plan_change',
      status: 'pending',
      timing: request.when,
      fromPlanId: membership.planId,
      toPlanId: to.id,
      fromPriceId: membership.stripePriceId,
      toPriceId: to.stripePriceId,
      fromPriceCents: membership.priceCents,
      toPriceCents: to.priceCents,
      // For period_end, until the provider's answer tells the end of the period (step 3).
      effectiveAt: request.when === 'now' ? new Date() : membership.expiresAt,
      requestedBy: actor.requestedBy,
      actorKeyId: actor.keyId,
    });
    return { change, subscriptionId: membership.stripeSubscriptionId };
  });

  let subscription: Stripe.Subscription;
  try {
    subscription = await swapSubscriptionPrice(
      stripe,
      subscriptionId,
      change.toPriceId!,
      change.timing === 'now' ? 'always_invoice' : 'none',
      `membership-change-${change.id}-apply`,
    );
  } catch (error) {
    await db.membershipChange.updateMany({
      where: { id: change.id, status: 'pending', providerAppliedAt: null },
      data: { status: 'failed', resolvedAt: new Date() },
    });
    throw error;
  }

  const periodEnd = subscriptionPeriod(subscription)?.end;
  return db.$transaction(async (tx) => {
    const membership = (await lockMembership(tx, { tenantId: actor.tenantId }, membershipId))!;
    // The end of the period is the provider's: expires_at stays at the renewal Stripe has just
    // begun until its invoice is paid (about an hour, days while past due).
    if (change.timing === 'period_end' && periodEnd) {
      await tx.membershipChange.updateMany({
        where: { id: change.id, providerAppliedAt: null, effectiveAt: { lt: periodEnd } },
        data: { effectiveAt: periodEnd },
      });
    }
    const current = await tx.membershipChange.findUniqueOrThrow({ where: { id: change.id } });
    await announceRequested(tx, membership, current);
    return changeView(await tx.membershipChange.findUniqueOrThrow({ where: { id: change.id } }));
  });
}

/** Writes the pending change; the one-pending index refusing it means another got there first. */
export async function insertPending(
  tx: Prisma.TransactionClient,
  data: Prisma.MembershipChangeUncheckedCreateInput,
): Promise<MembershipChange> {
  try {
    return await tx.membershipChange.create({ data });
  } catch (error) {
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') {
      throw new AppError('change_pending');
    }
    throw error;
  }
}
