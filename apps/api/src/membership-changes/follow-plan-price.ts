import { randomUUID } from 'node:crypto';
import { Prisma, type Db, type Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import type { LockedMembership } from '../locks';
import { addDays, dayOf } from '../membership-freezes/freeze-dates';
import { membershipRef } from '../memberships/membership-ref';
import { insertPending } from './request-plan-change';

/** Memberships moved to a new price: those the provider still bills. */
export const BILLED = ['active', 'past_due', 'frozen', 'paused_for_payment'] as const;

/**
 * What following the plan's price came to: a price_change `scheduled` now, or one pending for
 * that Price already (`following`); another change pending, which keeps the membership's price
 * while it is (`change_pending`); or nothing to follow (null).
 */
export type Following = { outcome: 'scheduled' | 'following' | 'change_pending'; changeId: string } | null;

/**
 * Whether membership `m` joined its plan `p` since the plan's latest price change was scheduled:
 * its last plan change into the plan applied since then or, bought on the plan, its purchase paid
 * since then. The provider tells payment times in whole seconds, so the scheduling counts from
 * its second. Null (not joined) when the plan keeps no scheduling time.
 */
const JOINED_SINCE_SCHEDULED = Prisma.sql`
  COALESCE(
    (SELECT max(j.resolved_at) FROM membership_changes j
     WHERE j.membership_id = m.id AND j.kind = 'plan_change' AND j.status = 'applied' AND j.to_plan_id = m.plan_id),
    (SELECT o.paid_at FROM orders o WHERE o.id = m.order_id)
  ) >= date_trunc('second', p.price_change_scheduled_at)`;

/**
 * Moves a billed recurring membership with a subscription to the Price its plan says, unless it
 * is on it already:
 * - while a price change is scheduled, every such membership to the scheduled Price, from its
 *   day;
 * - once it has applied, only a membership that joined the plan since the change was scheduled
 *   (JOINED_SINCE_SCHEDULED: it missed the change on the old Price) to the plan's Price. Any
 *   other membership keeps its Price, whatever it is: one skipped when the change was scheduled,
 *   one on an older price the operator left it on.
 * Never from before tomorrow (UTC), the notice an operator's own scheduling gives, so the
 * renewal that bills the new price is the first on or after that. A membership with a change
 * pending keeps its price while it is; one given a price_change to that Price before is not given
 * another (each membership moves to each Price once). Otherwise it gets a pending price_change
 * and membership.price_change_scheduled, whose actor is the admin who scheduled the change. Call
 * with the membership locked (its plan read under the lock), so whoever comes second sees the
 * first one's change.
 */
export async function followPlanPrice(tx: Tx, membership: LockedMembership, now = new Date()): Promise<Following> {
  const { plan } = membership;
  if (
    membership.billing !== 'recurring' ||
    !(BILLED as readonly string[]).includes(membership.status) ||
    !membership.stripeSubscriptionId
  ) {
    return null;
  }
  const target = await targetOf(tx, membership, now);
  if (!target || membership.stripePriceId === target.priceId) return null;
  const pending = await tx.membershipChange.findFirst({ where: { membershipId: membership.id, status: 'pending' } });
  if (pending) {
    const following = pending.kind === 'price_change' && pending.toPriceId === target.priceId;
    return { outcome: following ? 'following' : 'change_pending', changeId: pending.id };
  }
  const before = await tx.membershipChange.count({
    where: { membershipId: membership.id, kind: 'price_change', toPriceId: target.priceId },
  });
  if (before > 0) return null;

  const actorKeyId = plan.priceChangeScheduledByKeyId;
  const change = await insertPending(tx, {
    id: randomUUID(),
    membershipId: membership.id,
    kind: 'price_change',
    status: 'pending',
    timing: 'period_end',
    fromPlanId: plan.id,
    toPlanId: plan.id,
    fromPriceId: membership.stripePriceId,
    toPriceId: target.priceId,
    fromPriceCents: membership.priceCents,
    toPriceCents: target.priceCents,
    effectiveAt: target.effectiveAt,
    requestedBy: 'staff',
    actorKeyId,
  });
  await recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.price_change_scheduled',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(membership),
      change_id: change.id,
      from_price_cents: membership.priceCents,
      to_price_cents: target.priceCents,
      currency: membership.currency,
      interval: plan.interval!,
      effective_at: target.effectiveAt.toISOString(),
      actor_user_id: actorKeyId,
    },
  });
  return { outcome: 'scheduled', changeId: change.id };
}

/** The Price the membership is to be on, and from when; null: it keeps its own. */
async function targetOf(tx: Tx, membership: LockedMembership, now: Date) {
  const { plan } = membership;
  const tomorrow = addDays(dayOf(now), 1);
  if (plan.nextStripePriceId) {
    const day = plan.nextPriceEffectiveAt!;
    return {
      priceId: plan.nextStripePriceId,
      priceCents: plan.nextPriceCents!,
      effectiveAt: day > tomorrow ? day : tomorrow,
    };
  }
  // A membership whose Price was never stored was sold at the plan's price, as far as we know.
  if (!plan.stripePriceId || !membership.stripePriceId || !plan.priceChangeScheduledAt) return null;
  const [row] = await tx.$queryRaw<{ joined: boolean | null }[]>`
    SELECT ${JOINED_SINCE_SCHEDULED} AS joined
    FROM memberships m JOIN membership_plans p ON p.id = m.plan_id
    WHERE m.id = ${membership.id}::uuid`;
  if (!row?.joined) return null;
  return { priceId: plan.stripePriceId, priceCents: plan.priceCents, effectiveAt: tomorrow };
}

/**
 * Up to `limit` memberships followPlanPrice would give a price_change now (by the same rules, so
 * a batch is never filled with memberships that keep their price), by id.
 */
export function membershipsBehind(db: Db, limit: number): Promise<{ id: string }[]> {
  return db.$queryRaw<{ id: string }[]>`
    SELECT m.id FROM memberships m
    JOIN membership_plans p ON p.id = m.plan_id
    CROSS JOIN LATERAL (
      SELECT CASE
        WHEN p.next_stripe_price_id IS NOT NULL THEN p.next_stripe_price_id
        WHEN m.stripe_price_id IS NOT NULL AND ${JOINED_SINCE_SCHEDULED} THEN p.stripe_price_id
      END AS price_id
    ) target
    WHERE m.billing = 'recurring' AND m.status::text = ANY (${[...BILLED]}::text[]) AND m.stripe_subscription_id IS NOT NULL
      AND target.price_id IS NOT NULL AND m.stripe_price_id IS DISTINCT FROM target.price_id
      AND NOT EXISTS (
        SELECT 1 FROM membership_changes c WHERE c.membership_id = m.id
          AND (c.status = 'pending' OR (c.kind = 'price_change' AND c.to_price_id = target.price_id)))
    ORDER BY m.id
    LIMIT ${limit}`;
}
