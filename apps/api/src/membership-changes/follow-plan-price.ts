import { randomUUID } from 'node:crypto';
import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import type { LockedMembership } from '../locks';
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
 * Moves a billed recurring membership with a subscription to the Price its plan says: the
 * scheduled one while a price change is scheduled (from its day), else the plan's own (from
 * `now`: the day has passed and the membership joined on the old Price). Unless it is on that
 * Price, has a change pending, or was given a price_change to that Price before (so each
 * membership moves to each Price once), it gets a pending price_change and
 * membership.price_change_scheduled. Call with the membership locked (its plan read under the
 * lock), so whoever comes second sees the first one's change.
 */
export async function followPlanPrice(
  tx: Tx,
  membership: LockedMembership,
  actorKeyId: string | null,
  now = new Date(),
): Promise<Following> {
  const { plan } = membership;
  const target = targetOf(membership, now);
  if (
    !target ||
    membership.billing !== 'recurring' ||
    !(BILLED as readonly string[]).includes(membership.status) ||
    !membership.stripeSubscriptionId ||
    membership.stripePriceId === target.priceId
  ) {
    return null;
  }
  const pending = await tx.membershipChange.findFirst({ where: { membershipId: membership.id, status: 'pending' } });
  if (pending) {
    const following = pending.kind === 'price_change' && pending.toPriceId === target.priceId;
    return { outcome: following ? 'following' : 'change_pending', changeId: pending.id };
  }
  const before = await tx.membershipChange.count({
    where: { membershipId: membership.id, kind: 'price_change', toPriceId: target.priceId },
  });
  if (before > 0) return null;

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

/** The Price the membership is to be on, and from when. */
function targetOf(membership: LockedMembership, now: Date) {
  const { plan } = membership;
  if (plan.nextStripePriceId) {
    return {
      priceId: plan.nextStripePriceId,
      priceCents: plan.nextPriceCents!,
      effectiveAt: plan.nextPriceEffectiveAt!,
    };
  }
  // A membership whose Price was never stored was sold at the plan's price, as far as we know.
  if (!plan.stripePriceId || !membership.stripePriceId) return null;
  return { priceId: plan.stripePriceId, priceCents: plan.priceCents, effectiveAt: now };
}
