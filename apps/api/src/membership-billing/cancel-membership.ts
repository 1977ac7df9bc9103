import type { Db, Membership } from '@booking/db';
import { AppError, assertMembershipAllows } from '@booking/domain';
import Stripe from 'stripe';
import { lockMembership } from '../locks';
import type { MembershipActor } from '../memberships/membership-actor';
import { providerCall } from '../payments/provider-call';
import { recordEnded } from './billing-events';
import { closeEndedMembership } from './close-ended-membership';
import type { CancelMembershipRequest, MembershipCancellation } from './membership-billing-schemas';
import { retrieveSubscription, syncMembership, type BillingDeps } from './sync-membership';

const iso = (date: Date | null) => date && date.toISOString();

export function cancellationView(membership: Membership): MembershipCancellation {
  return {
    id: membership.id,
    billing: membership.billing,
    status: membership.status,
    cancel_at_period_end: membership.cancelAtPeriodEnd,
    end_requested_at: iso(membership.endRequestedAt),
    end_requested_by: membership.endRequestedBy,
    ended_at: iso(membership.endedAt),
    end_reason: membership.endReason,
    expires_at: iso(membership.expiresAt),
  };
}

/**
 * Ends a membership, at once or at the end of the period paid for. Transaction 1 locks it,
 * checks it is live and stamps who asked, when and for which end: from that moment money for a
 * later period is given back (for `now`, any money paid from then on), whatever the provider does
 * meanwhile. Then the provider is asked (recurring): cancel now, or cancel_at_period_end.
 * Transaction 2 converges from the subscription it answered with, as a notification would: `now`
 * ends it with `membership.ended` (the provider's later deleted notification finds it ended). A
 * fixed-term membership has nothing at the provider: `now` ends it in transaction 1, with no
 * refund; `period_end` lets it expire at its term. Members may only cancel at period end.
 */
export async function cancelMembership(
  deps: { db: Db; config: BillingDeps['config']; stripe: Stripe | null },
  actor: MembershipActor,
  membershipId: string,
  request: CancelMembershipRequest,
): Promise<MembershipCancellation> {
  if (actor.requestedBy === 'member' && request.at === 'now')
    throw new AppError('forbidden', 'a member cancels at period end; staff can end a membership now');
  const requestedAt = new Date();
  const reason = actor.requestedBy === 'member' ? 'cancelled_by_member' : 'cancelled_by_staff';

  const stamped = await deps.db.$transaction(async (tx) => {
    const membership = await lockMembership(tx, { tenantId: actor.tenantId }, membershipId);
    if (!membership) throw new AppError('membership_not_found');
    assertMembershipAllows(membership.status, 'cancel');
    // The first request's stamp stands (a repeated period_end keeps its time), except that
    // staff ending it now take the end over: the end is theirs, at their time, and no longer at
    // period end (late-money.ts judges by the kind).
    const stamp =
      membership.endRequestedAt && request.at === 'period_end'
        ? {}
        : {
            endRequestedAt: requestedAt,
            endRequestedBy: actor.requestedBy,
            endRequestedKeyId: actor.keyId,
            periodEndRequestedAt: request.at === 'period_end' ? requestedAt : null,
          };
    if (membership.billing === 'fixed_term') {
      if (request.at === 'period_end') {
        return tx.membership.update({ where: { id: membership.id }, data: { ...stamp, cancelAtPeriodEnd: true } });
      }
      const ended = await tx.membership.update({
        where: { id: membership.id },
        data: { ...stamp, status: 'ended', endedAt: requestedAt, endReason: reason },
      });
      await recordEnded(tx, ended, {
        reason,
        endedAt: requestedAt,
        paidThrough: ended.expiresAt,
        actorKeyId: actor.keyId,
      });
      await closeEndedMembership(tx, ended, requestedAt);
      return ended;
    }
    if (!membership.stripeSubscriptionId) throw new AppError('membership_not_active', { status: membership.status });
    if (!deps.stripe) throw new AppError('payments_not_configured');
    const earlier = {
      endRequestedAt: membership.endRequestedAt,
      endRequestedBy: membership.endRequestedBy,
      endRequestedKeyId: membership.endRequestedKeyId,
      periodEndRequestedAt: membership.periodEndRequestedAt,
    };
    return { ...(await tx.membership.update({ where: { id: membership.id }, data: stamp })), earlier };
  });
  if (stamped.billing === 'fixed_term' || !('earlier' in stamped)) return cancellationView(stamped);

  const stripe = deps.stripe!;
  const subscriptionId = stamped.stripeSubscriptionId!;
  let subscription: Stripe.Subscription;
  const askedAt = new Date();
  try {
    subscription = await providerCall(() => askProvider(stripe, subscriptionId, membershipId, request.at));
  } catch (error) {
    // The provider did not take the request: the end pending is the one before it (none, or the
    // member's at period end, with its kind), so later renewals are judged as they were.
    await deps.db.membership.updateMany({
      where: { id: membershipId, endRequestedAt: requestedAt, status: { notIn: ['ended', 'expired', 'cancelled'] } },
      data: stamped.earlier,
    });
    throw error;
  }
  await syncMembership(
    { db: deps.db, config: deps.config, stripe },
    { subscriptionId, read: { subscription, at: askedAt } },
  );
  return cancellationView(await deps.db.membership.findUniqueOrThrow({ where: { id: membershipId } }));
}

/** The provider's side, keyed by the membership so a retried request is the same request. */
async function askProvider(stripe: Stripe, subscriptionId: string, membershipId: string, at: 'now' | 'period_end') {
  try {
    if (at === 'now') {
      return await stripe.subscriptions.cancel(
        subscriptionId,
        { expand: ['latest_invoice'] },
        { idempotencyKey: `membership-cancel-now-${membershipId}` },
      );
    }
    return await stripe.subscriptions.update(
      subscriptionId,
      { cancel_at_period_end: true, expand: ['latest_invoice'] },
      { idempotencyKey: `membership-cancel-period-end-${membershipId}` },
    );
  } catch (error) {
    // Already ended at the provider (the grace job, the provider's own dunning): read what it is.
    if (error instanceof Stripe.errors.StripeInvalidRequestError) {
      const subscription = await retrieveSubscription(stripe, subscriptionId);
      if (subscription.status === 'canceled' || subscription.status === 'incomplete_expired') return subscription;
    }
    throw error;
  }
}
