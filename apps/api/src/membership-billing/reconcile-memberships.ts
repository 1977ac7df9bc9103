import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { addDays } from '../membership-freezes/freeze-dates';
import { refundLateInvoices } from './late-money';
import { syncMembership } from './sync-membership';

const BATCH = 50;

/**
 * The reconcile job: lost or never-sent notifications repaired. Live recurring memberships in a
 * state that waits on the provider (pending payment, past due, paused for payment, an end asked
 * for) not read for `reconcileSeconds`, and any not read for a day, are read again and converged
 * exactly as a notification converges them (sync-membership.ts), the newest invoice applied as a
 * fact. Each membership is locked SKIP LOCKED, so several pods share the work and record each
 * event once. One whose read failed waits `reconcileSeconds` from the failure before it is tried
 * again. Refunds that failed earlier are retried. Returns how many memberships it read (or tried to).
 */
export async function reconcileMemberships(
  deps: { db: Db; config: Config; stripe: Stripe | null; logger?: Pick<Logger, 'warn'> },
  now = new Date(),
): Promise<number> {
  if (!deps.stripe) return 0;
  const stripe = deps.stripe;
  const waiting = new Date(now.getTime() - deps.config.memberships.reconcileSeconds * 1000);
  const stale = addDays(now, -1);
  const due = await deps.db.membership.findMany({
    where: {
      billing: 'recurring',
      stripeSubscriptionId: { not: null },
      status: { in: ['pending_payment', 'active', 'frozen', 'past_due', 'paused_for_payment'] },
      // A failed read backs off on a column of its own: tried at most once per reconcileSeconds,
      // it takes one place in one batch of a run and leaves the next batches to the others.
      AND: [{ OR: [{ reconcileFailedAt: null }, { reconcileFailedAt: { lt: waiting } }] }],
      OR: [
        { stripeSyncedAt: null },
        { stripeSyncedAt: { lt: stale } },
        {
          stripeSyncedAt: { lt: waiting },
          OR: [
            { status: { in: ['pending_payment', 'past_due', 'paused_for_payment'] } },
            { endRequestedAt: { not: null } },
            { cancelAtPeriodEnd: true },
          ],
        },
      ],
    },
    select: { id: true, stripeSubscriptionId: true },
    orderBy: { stripeSyncedAt: { sort: 'asc', nulls: 'first' } },
    take: BATCH,
  });
  let read = 0;
  for (const membership of due) {
    try {
      const result = await syncMembership(
        { db: deps.db, config: deps.config, stripe },
        { subscriptionId: membership.stripeSubscriptionId!, unlessBusy: true },
      );
      if (result.done) read += 1;
    } catch (error) {
      // One subscription the provider cannot show stops nothing else: it is tried again after
      // reconcileSeconds. Not stripe_synced_at: nothing was converged, and a notification's read
      // taken before now must still converge the status (sync-membership.ts).
      deps.logger?.warn({ err: error, membershipId: membership.id }, 'membership reconcile failed');
      await deps.db.membership.update({ where: { id: membership.id }, data: { reconcileFailedAt: now } });
      read += 1;
    }
  }
  const unrefunded = await deps.db.membershipInvoice.findMany({
    where: { reviewReason: { not: null }, refundedAt: null, updatedAt: { lt: waiting } },
    select: { stripeInvoiceId: true },
    take: BATCH,
  });
  if (unrefunded.length > 0) {
    await refundLateInvoices(
      { db: deps.db, stripe },
      unrefunded.map((invoice) => invoice.stripeInvoiceId),
    ).catch((error: unknown) => deps.logger?.warn({ err: error }, 'membership refund retry failed'));
  }
  return read;
}
