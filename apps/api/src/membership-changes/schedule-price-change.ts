import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { lockMembership } from '../locks';
import { addDays, dayOf } from '../membership-freezes/freeze-dates';
import type { Operator } from '../operators/api-key-auth';
import { providerCall } from '../payments/provider-call';
import { idOf } from '../payments/stripe-ids';
import type { PriceChangeRequest, PriceChangeResult } from './change-schemas';
import { BILLED, followPlanPrice, type Following } from './follow-plan-price';

/**
 * An admin changes a recurring plan's price from a day on. A new Stripe Price is made on the
 * plan's product (Prices never change; idempotency key from plan, price and day). New buyers get
 * it from that day (the plan's next_price_* columns, made its price by the apply-price-changes
 * job); when and by which key it was scheduled is kept on the plan with them, before any
 * membership is reached, so the job, which gives the change to memberships this request has not
 * reached yet or that join the plan later, gives it as this admin's. Every billed recurring
 * membership of the plan follows it (followPlanPrice): a pending price_change and
 * membership.price_change_scheduled, one transaction each; one with another change pending keeps
 * its price and is listed as skipped. The same request again (same price and day) carries on
 * where one that failed part way stopped, listing the memberships already following as
 * scheduled; any other while one is scheduled is 409 change_pending. The job moves each
 * subscription to the new Price before the first renewal on or after the day; that renewal's
 * paid invoice applies it.
 */
export async function schedulePriceChange(
  deps: { db: Db; stripe: Stripe | null },
  operator: Operator,
  planId: string,
  request: PriceChangeRequest,
  now = new Date(),
): Promise<PriceChangeResult> {
  const { db, stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');
  const found = await db.membershipPlan.findFirst({ where: { id: planId, tenantId: operator.tenantId } });
  if (!found) throw new AppError('membership_plan_not_found');
  const plan = found;
  if (plan.billing !== 'recurring' || !plan.interval || !plan.stripePriceId) {
    throw new AppError(
      'plan_invalid',
      'only a recurring plan has a price that renews; sell a new fixed-term plan instead',
    );
  }
  const effectiveAt = new Date(`${request.effective_on}T00:00:00.000Z`);
  const tomorrow = addDays(dayOf(now), 1);
  if (Number.isNaN(effectiveAt.getTime()) || effectiveAt < tomorrow) {
    throw new AppError('invalid_body', 'effective_on must be a real day, tomorrow (UTC) or later');
  }
  if (request.price_cents === plan.priceCents) {
    throw new AppError('plan_invalid', 'the plan has this price already');
  }
  const priceId = scheduledAs(plan, request.price_cents, effectiveAt) ?? (await claimNewPrice(stripe));

  const candidates = await db.membership.findMany({
    where: { planId: plan.id, billing: 'recurring', status: { in: [...BILLED] } },
    select: { id: true },
    orderBy: { id: 'asc' },
  });
  const result: PriceChangeResult = {
    plan_id: plan.id,
    from_price_cents: plan.priceCents,
    to_price_cents: request.price_cents,
    currency: plan.currency,
    effective_at: effectiveAt.toISOString(),
    stripe_price_id: priceId,
    scheduled: [],
    skipped: [],
  };
  for (const { id } of candidates) {
    const following = await scheduleOne(id).catch((error: unknown) => {
      // The one-pending index: a plan change got in between the check and the insert.
      if (error instanceof AppError && error.code === 'change_pending') return { outcome: 'change_pending' } as const;
      throw error;
    });
    if (following?.outcome === 'change_pending') result.skipped.push({ membership_id: id, reason: 'change_pending' });
    else if (following) result.scheduled.push({ membership_id: id, change_id: following.changeId });
  }
  return result;

  /** Makes the new Price and claims the plan's scheduled price for it. */
  async function claimNewPrice(stripe: Stripe): Promise<string> {
    if (plan.nextPriceCents !== null) {
      throw new AppError('change_pending', 'the plan has another price or day scheduled already');
    }
    const productId =
      plan.stripeProductId ?? idOf((await providerCall(() => stripe.prices.retrieve(plan.stripePriceId!))).product);
    if (!productId) throw new AppError('plan_invalid', 'the plan has no Stripe product');
    const price = await providerCall(() =>
      stripe.prices.create(
        {
          product: productId,
          unit_amount: request.price_cents,
          currency: plan.currency.toLowerCase(),
          recurring: { interval: plan.interval!, interval_count: plan.intervalCount },
        },
        { idempotencyKey: `plan-${plan.id}-price-${request.price_cents}-${request.effective_on}` },
      ),
    );
    const claimed = await db.membershipPlan.updateMany({
      where: { id: plan.id, nextPriceCents: null },
      data: {
        nextPriceCents: request.price_cents,
        nextStripePriceId: price.id,
        nextPriceEffectiveAt: effectiveAt,
        priceChangeScheduledAt: now,
        priceChangeScheduledByKeyId: operator.keyId,
      },
    });
    if (claimed.count > 0) return price.id;
    // The same request at once, by another key: both carry on with the one change.
    const stored = await db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id } });
    const same = scheduledAs(stored, request.price_cents, effectiveAt);
    if (!same) throw new AppError('change_pending', 'the plan has another price or day scheduled already');
    return same;
  }

  function scheduleOne(id: string): Promise<Following> {
    return db.$transaction(async (tx) => {
      const membership = await lockMembership(tx, { tenantId: operator.tenantId }, id);
      if (!membership || membership.planId !== plan.id) return null;
      return followPlanPrice(tx, membership, now);
    });
  }
}

/** The Stripe Price of the plan's scheduled change when it is this price from this day. */
function scheduledAs(
  plan: { nextPriceCents: number | null; nextPriceEffectiveAt: Date | null; nextStripePriceId: string | null },
  priceCents: number,
  effectiveAt: Date,
): string | null {
  const same = plan.nextPriceCents === priceCents && plan.nextPriceEffectiveAt?.getTime() === effectiveAt.getTime();
  return same ? plan.nextStripePriceId : null;
}
