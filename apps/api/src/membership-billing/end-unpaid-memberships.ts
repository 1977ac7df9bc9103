import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import Stripe from 'stripe';
import { retrieveSubscription, syncMembership } from './sync-membership';

const BATCH = 50;

/**
 * The grace job: memberships paused for payment whose grace has run out are ended. The provider
 * goes first (its subscription is cancelled, keyed by the membership, so every pod asks the same
 * request); the membership is then converged from the answer with the membership locked SKIP
 * LOCKED, so `membership.ended{payment_failed}` is recorded once however many pods run this and
 * whatever notification comes meanwhile. Returns how many memberships it ended.
 */
export async function endUnpaidMemberships(
  deps: { db: Db; config: Config; stripe: Stripe | null; logger?: Pick<Logger, 'warn'> },
  now = new Date(),
): Promise<number> {
  if (!deps.stripe) return 0;
  const stripe = deps.stripe;
  const due = await deps.db.membership.findMany({
    where: { status: 'paused_for_payment', graceEndsAt: { lte: now }, stripeSubscriptionId: { not: null } },
    select: { id: true, stripeSubscriptionId: true },
    orderBy: { graceEndsAt: 'asc' },
    take: BATCH,
  });
  let ended = 0;
  for (const membership of due) {
    const subscriptionId = membership.stripeSubscriptionId!;
    try {
      const askedAt = new Date();
      const subscription = await cancelAtProvider(stripe, subscriptionId, membership.id);
      const result = await syncMembership(
        { db: deps.db, config: deps.config, stripe },
        { subscriptionId, read: { subscription, at: askedAt }, unlessBusy: true },
      );
      if (result.transition === 'ended') ended += 1;
    } catch (error) {
      // One subscription the provider cannot cancel stops nothing else; the next run tries again.
      deps.logger?.warn({ err: error, membershipId: membership.id }, 'ending an unpaid membership failed');
    }
  }
  return ended;
}

async function cancelAtProvider(stripe: Stripe, subscriptionId: string, membershipId: string) {
  try {
    return await stripe.subscriptions.cancel(
      subscriptionId,
      { expand: ['latest_invoice'] },
      { idempotencyKey: `membership-grace-end-${membershipId}` },
    );
  } catch (error) {
    // Ended already (another pod, the member, the provider): converge from what it is.
    if (error instanceof Stripe.errors.StripeInvalidRequestError) return retrieveSubscription(stripe, subscriptionId);
    throw error;
  }
}
