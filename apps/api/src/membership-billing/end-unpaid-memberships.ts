import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import Stripe from 'stripe';
import { lockMembershipUnlessBusy } from '../locks';
import { providerCall } from '../payments/provider-call';
import { latestInvoiceOf } from './billing-facts';
import { retrieveSubscription, syncMembership, type BillingDeps } from './sync-membership';

const BATCH = 50;

/**
 * The grace job: memberships paused for payment whose grace has run out are ended. Each is
 * re-checked under its lock (SKIP LOCKED: one a notification is converging right now is left to
 * it and to the next run), then its subscription read: a member who has paid the open invoice
 * meanwhile (its notification not handled yet) keeps the membership, converged from that read.
 * Only a subscription still unpaid is cancelled, keyed by the membership, so every pod asks the
 * same request; the membership is then converged from the answer with the membership locked SKIP
 * LOCKED, so `membership.ended{payment_failed}` is recorded once however many pods run this and
 * whatever notification comes meanwhile. Returns how many memberships it ended.
 */
export async function endUnpaidMemberships(
  deps: { db: Db; config: Config; stripe: Stripe | null; logger?: Pick<Logger, 'warn'> },
  now = new Date(),
): Promise<number> {
  if (!deps.stripe) return 0;
  const billing = { db: deps.db, config: deps.config, stripe: deps.stripe };
  const due = await deps.db.membership.findMany({
    where: { status: 'paused_for_payment', graceEndsAt: { lte: now }, stripeSubscriptionId: { not: null } },
    select: { id: true, stripeSubscriptionId: true },
    orderBy: { graceEndsAt: 'asc' },
    take: BATCH,
  });
  let ended = 0;
  for (const membership of due) {
    try {
      if (await endUnpaidMembership(billing, membership.id, membership.stripeSubscriptionId!, now)) ended += 1;
    } catch (error) {
      // One subscription the provider cannot read or cancel stops nothing else; the next run tries again.
      deps.logger?.warn({ err: error, membershipId: membership.id }, 'ending an unpaid membership failed');
    }
  }
  return ended;
}

async function endUnpaidMembership(
  deps: BillingDeps,
  membershipId: string,
  subscriptionId: string,
  now: Date,
): Promise<boolean> {
  if (!(await stillDue(deps.db, membershipId, now))) return false;
  const readAt = new Date();
  const read = await providerCall(() => retrieveSubscription(deps.stripe, subscriptionId));
  let subscription = read;
  let askedAt = readAt;
  if (stillUnpaid(read)) {
    askedAt = new Date();
    subscription = await cancelAtProvider(deps.stripe, subscriptionId, membershipId);
  }
  const result = await syncMembership(deps, {
    subscriptionId,
    read: { subscription, at: askedAt },
    unlessBusy: true,
  });
  return result.transition === 'ended';
}

/** Still paused for payment with its grace over, read under the lock: a notification may have converged it since the batch was read. */
function stillDue(db: Db, membershipId: string, now: Date): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const membership = await lockMembershipUnlessBusy(tx, membershipId);
    return (
      !!membership &&
      membership.status === 'paused_for_payment' &&
      membership.graceEndsAt !== null &&
      membership.graceEndsAt.getTime() <= now.getTime()
    );
  });
}

/**
 * Whether the subscription is still waiting for the payment that never came. Paid since (it is
 * active or trialing again, or its newest invoice is paid) or ended already, it is not cancelled:
 * the membership converges from the read instead.
 */
function stillUnpaid(subscription: Stripe.Subscription): boolean {
  if (!['past_due', 'unpaid', 'paused'].includes(subscription.status)) return false;
  return latestInvoiceOf(subscription)?.status !== 'paid';
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
