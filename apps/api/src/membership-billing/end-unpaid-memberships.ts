import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import Stripe from 'stripe';
import { lockMembershipUnlessBusy } from '../locks';
import { providerCall } from '../payments/provider-call';
import { latestInvoiceOf } from './billing-facts';
import { retrieveSubscription, syncMembership, type BillingDeps } from './sync-membership';

/** Memberships one batch takes (exported for the tests that fill one). */
export const GRACE_END_BATCH = 50;

/**
 * What one membership's turn came to: `left` (another transaction holds it, or it is no longer
 * due), `ended`, or `unended`: converged from the read, not ended by it (paid meanwhile, ended by
 * another pod first, or a subscription that gives nothing to end it by).
 */
type Turn = 'left' | 'ended' | 'unended';

/**
 * The grace job: memberships paused for payment whose grace has run out are ended. Each is
 * re-checked under its lock (SKIP LOCKED: one a notification is converging right now is left to
 * it and to the next batch or run), then its subscription read: a member who has paid the open
 * invoice meanwhile (its notification not handled yet) keeps the membership, converged from that
 * read. Only a subscription still unpaid is cancelled, keyed by the membership, so every pod asks
 * the same request; the membership is then converged from the answer with the membership locked
 * SKIP LOCKED, so `membership.ended{payment_failed}` is recorded once however many pods run this
 * and whatever notification comes meanwhile.
 *
 * One the job could not end and that is still paused for payment (Stripe failed or refused, or
 * the subscription left it paused) is stamped grace_end_failed_at with `now` and left out until
 * reconcileSeconds from then, so it takes one place in one batch per interval and never holds
 * back the memberships behind it. A run passes one `now` to all its batches, so what failed in
 * one batch is not due in the next. Returns how many memberships it ended or stamped: neither is
 * due again in the run, which goes on past a batch that only failed. One it left (busy) is not
 * counted, so a run does not spin on a membership another transaction holds.
 */
export async function endUnpaidMemberships(
  deps: { db: Db; config: Config; stripe: Stripe | null; logger?: Pick<Logger, 'warn'> },
  now = new Date(),
): Promise<number> {
  if (!deps.stripe) return 0;
  const billing = { db: deps.db, config: deps.config, stripe: deps.stripe };
  const failedBefore = new Date(now.getTime() - deps.config.memberships.reconcileSeconds * 1000);
  const due = await deps.db.membership.findMany({
    where: {
      status: 'paused_for_payment',
      graceEndsAt: { lte: now },
      stripeSubscriptionId: { not: null },
      OR: [{ graceEndFailedAt: null }, { graceEndFailedAt: { lt: failedBefore } }],
    },
    select: { id: true, stripeSubscriptionId: true },
    orderBy: { graceEndsAt: 'asc' },
    take: GRACE_END_BATCH,
  });
  let tried = 0;
  for (const membership of due) {
    let counts: boolean;
    try {
      const turn = await endUnpaidMembership(billing, membership.id, membership.stripeSubscriptionId!, now);
      counts = turn === 'ended';
      if (turn === 'unended' && (await backOff(deps.db, membership.id, now))) {
        deps.logger?.warn({ membershipId: membership.id }, 'an unpaid membership past its grace was left paused');
        counts = true;
      }
    } catch (error) {
      // One subscription the provider cannot read or cancel stops nothing else: it is tried again
      // after reconcileSeconds, and the rest of the batch, and the batches behind it, go on.
      deps.logger?.warn({ err: error, membershipId: membership.id }, 'ending an unpaid membership failed');
      counts = await backOff(deps.db, membership.id, now);
    }
    if (counts) tried += 1;
  }
  return tried;
}

/**
 * Stamps a failed try, if the membership is still paused for payment (another pod may have ended
 * it meanwhile). Never moved back: a pod whose run started earlier must not make it due again
 * for a run that has tried it already. Raw SQL so updated_at keeps meaning a change to the
 * membership, not to the job's schedule. Returns whether it was stamped.
 */
async function backOff(db: Db, membershipId: string, now: Date): Promise<boolean> {
  const stamped = await db.$executeRaw`
    UPDATE memberships SET grace_end_failed_at = GREATEST(grace_end_failed_at, ${now})
    WHERE id = ${membershipId}::uuid AND status = 'paused_for_payment'`;
  return stamped > 0;
}

async function endUnpaidMembership(
  deps: BillingDeps,
  membershipId: string,
  subscriptionId: string,
  now: Date,
): Promise<Turn> {
  if (!(await stillDue(deps.db, membershipId, now))) return 'left';
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
  // Busy now: the next batch or run converges it from a new read (a cancelled subscription ends it).
  if (!result.done) return 'left';
  return result.transition === 'ended' ? 'ended' : 'unended';
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
