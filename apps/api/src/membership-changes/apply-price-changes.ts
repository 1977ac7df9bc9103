import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { lockMembershipUnlessBusy } from '../locks';
import { BILLED, followPlanPrice, membershipsBehind } from './follow-plan-price';
import { swapSubscriptionPrice } from './swap-subscription-price';

const BATCH = 50;
/** A swap is one provider round trip; the change row stays locked while it runs. */
const SWAP_TIMEOUT_MS = 30_000;

/**
 * The apply-price-changes job, one batch:
 * 0. billed recurring memberships that missed their plan's price change follow it
 *    (followPlanPrice: while it is scheduled, any not on the scheduled Price, such as a purchase
 *    paid since or a member whose other change has gone; once it has applied, only those that
 *    joined the plan since it was scheduled). Each gets a pending price_change and
 *    membership.price_change_scheduled, once per membership and Price, the membership locked
 *    unless busy, so concurrent runs and the scheduling request take turns;
 * 1. plans whose scheduled price has come make it their price for new buyers;
 * 2. each pending price_change not yet told to the provider, whose membership's next renewal
 *    (expires_at) is on or after the change's effective_at, has its subscription item swapped to
 *    the new Price (no proration; idempotency key from the change id) and is stamped
 *    provider_applied_at. The renewal then bills the new price and its paid invoice applies the
 *    change (applyPaidChange). A change whose membership is no longer billed is cancelled silently.
 *
 * Each change is claimed FOR UPDATE SKIP LOCKED and held through its swap, so concurrent runs
 * swap each change once; the membership itself is not locked, so members are never kept
 * waiting on the provider. A failure with one membership (step 0) or change (step 2) is logged
 * and left for the next run; the others carry on. Returns how many plans and changes it moved on.
 */
export async function applyPriceChanges(
  deps: { db: Db; stripe: Stripe | null; logger?: Pick<Logger, 'warn'> },
  now = new Date(),
): Promise<number> {
  const { db, stripe, logger } = deps;
  const followed = await followPlanPrices(db, logger, now);
  const plans = await db.$executeRaw`
    UPDATE membership_plans
    SET price_cents = next_price_cents, stripe_price_id = next_stripe_price_id,
        next_price_cents = NULL, next_stripe_price_id = NULL, next_price_effective_at = NULL, updated_at = now()
    WHERE next_price_effective_at <= ${now}`;
  if (!stripe) return followed + plans;

  const due = await db.$queryRaw<{ id: string }[]>`
    SELECT c.id FROM membership_changes c JOIN memberships m ON m.id = c.membership_id
    WHERE c.kind = 'price_change' AND c.status = 'pending' AND c.provider_applied_at IS NULL
      AND (m.expires_at >= c.effective_at OR m.status::text <> ALL (${[...BILLED]}::text[]))
    ORDER BY c.effective_at, c.id
    LIMIT ${BATCH}`;
  let moved = followed + plans;
  for (const { id } of due) {
    try {
      if (await swapOne(db, stripe, id)) moved += 1;
    } catch (error) {
      // The provider failed or refused: the change stays pending for the next run.
      logger?.warn({ err: error, changeId: id }, 'could not move a subscription to its new price');
    }
  }
  return moved;
}

/** Step 0: the memberships followPlanPrice would move, each in its own transaction. */
async function followPlanPrices(db: Db, logger: Pick<Logger, 'warn'> | undefined, now: Date): Promise<number> {
  let followed = 0;
  for (const { id } of await membershipsBehind(db, BATCH)) {
    try {
      const outcome = await db.$transaction(async (tx) => {
        const membership = await lockMembershipUnlessBusy(tx, id);
        return membership ? followPlanPrice(tx, membership, now) : null;
      });
      if (outcome?.outcome === 'scheduled') followed += 1;
    } catch (error) {
      // Nothing was written for it: the next run tries it again.
      logger?.warn({ err: error, membershipId: id }, "could not give a membership its plan's new price");
    }
  }
  return followed;
}

function swapOne(db: Db, stripe: Stripe, changeId: string): Promise<boolean> {
  return db.$transaction(
    async (tx) => {
      const claimed = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM membership_changes
        WHERE id = ${changeId}::uuid AND status = 'pending' AND provider_applied_at IS NULL
        FOR UPDATE SKIP LOCKED`;
      if (claimed.length === 0) return false;
      const change = await tx.membershipChange.findUniqueOrThrow({
        where: { id: changeId },
        include: { membership: { select: { status: true, stripeSubscriptionId: true, expiresAt: true } } },
      });
      const { membership } = change;
      if (!(BILLED as readonly string[]).includes(membership.status) || !membership.stripeSubscriptionId) {
        await tx.membershipChange.update({
          where: { id: changeId },
          data: { status: 'cancelled', resolvedAt: new Date() },
        });
        return true;
      }
      if (membership.expiresAt === null || membership.expiresAt < change.effectiveAt) return false;
      await swapSubscriptionPrice(
        stripe,
        membership.stripeSubscriptionId,
        change.toPriceId!,
        'none',
        `membership-change-${change.id}-swap`,
      );
      await tx.membershipChange.update({ where: { id: changeId }, data: { providerAppliedAt: new Date() } });
      return true;
    },
    { timeout: SWAP_TIMEOUT_MS },
  );
}
