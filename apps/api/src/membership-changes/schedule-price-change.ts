import { randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import type Stripe from 'stripe';
import { lockMembership } from '../locks';
import { addDays, dayOf } from '../membership-freezes/freeze-dates';
import { membershipRef } from '../memberships/membership-ref';
import type { Operator } from '../operators/api-key-auth';
import { providerCall } from '../payments/provider-call';
import { idOf } from '../payments/stripe-ids';
import type { PriceChangeRequest, PriceChangeResult } from './change-schemas';
import { insertPending } from './request-plan-change';

/** Memberships moved to a new price: those the provider still bills. */
const BILLED = ['active', 'past_due', 'frozen', 'paused_for_payment'] as const;

/**
 * An admin changes a recurring plan's price from a day on. A new Stripe Price is made on the
 * plan's product (Prices never change; idempotency key from plan, price and day). New buyers get
 * it from that day (the plan's next_price_* columns, made its price by the apply-price-changes
 * job). Every live recurring membership of the plan gets a pending price_change and
 * membership.price_change_scheduled, one transaction each; one with a change pending already
 * keeps its price and is listed as skipped. The job later moves each subscription to the new
 * Price before the first renewal on or after the day, and that renewal's paid invoice applies it.
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
  if (plan.nextPriceCents !== null) {
    throw new AppError('change_pending', 'the plan has a price change scheduled already');
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
    data: { nextPriceCents: request.price_cents, nextStripePriceId: price.id, nextPriceEffectiveAt: effectiveAt },
  });
  if (claimed.count === 0) throw new AppError('change_pending', 'the plan has a price change scheduled already');

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
    stripe_price_id: price.id,
    scheduled: [],
    skipped: [],
  };
  for (const { id } of candidates) {
    const changeId = await scheduleOne(id).catch((error: unknown) => {
      // The one-pending index: a plan change got in between the check and the insert.
      if (error instanceof AppError && error.code === 'change_pending') return null;
      throw error;
    });
    if (changeId) result.scheduled.push({ membership_id: id, change_id: changeId });
    else if (changeId === null) result.skipped.push({ membership_id: id, reason: 'change_pending' });
  }
  return result;

  function scheduleOne(id: string): Promise<string | null | undefined> {
    return db.$transaction(async (tx) => {
      const membership = await lockMembership(tx, { tenantId: operator.tenantId }, id);
      if (!membership || membership.planId !== plan.id) return undefined;
      if (!(BILLED as readonly string[]).includes(membership.status)) return undefined;
      const pending = await tx.membershipChange.findFirst({ where: { membershipId: id, status: 'pending' } });
      if (pending) return null;
      const change = await insertPending(tx, {
        id: randomUUID(),
        membershipId: id,
        kind: 'price_change',
        status: 'pending',
        timing: 'period_end',
        fromPlanId: plan.id,
        toPlanId: plan.id,
        fromPriceId: membership.stripePriceId,
        toPriceId: price.id,
        fromPriceCents: membership.priceCents,
        toPriceCents: request.price_cents,
        effectiveAt,
        requestedBy: 'staff',
        actorKeyId: operator.keyId,
      });
      await recordEvent(tx, {
        tenantId: membership.tenantId,
        name: 'membership.price_change_scheduled',
        entityType: 'membership',
        entityId: id,
        fields: {
          ...membershipRef(membership),
          change_id: change.id,
          from_price_cents: membership.priceCents,
          to_price_cents: request.price_cents,
          currency: membership.currency,
          interval: plan.interval!,
          effective_at: effectiveAt.toISOString(),
          actor_user_id: operator.keyId,
        },
      });
      return change.id;
    });
  }
}
