import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { providerCall } from '../payments/provider-call';
import { WITH_BENEFITS, type PlanWithBenefits } from './plan-view';

/**
 * Gives a recurring plan its Stripe Product and Price, if it has none yet, and returns the plan
 * as stored after. The plan row is written first (without them); each provider object is created
 * with an idempotency key derived from the plan id, so asking again (the admin retrying a create
 * Stripe failed, or a purchase of a plan whose create failed) finds the same objects and never
 * makes a second. The ids are stored only where none is, so concurrent callers agree.
 * Fixed-term plans need nothing from Stripe.
 */
export async function ensurePlanPrice(
  deps: { db: Db; stripe: Stripe | null },
  plan: PlanWithBenefits,
): Promise<PlanWithBenefits> {
  if (plan.billing !== 'recurring' || (plan.stripeProductId && plan.stripePriceId)) return plan;
  const { stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');
  const metadata = { tenant_id: plan.tenantId, plan_id: plan.id };
  const productId =
    plan.stripeProductId ??
    (
      await providerCall(() =>
        stripe.products.create({ name: plan.name, metadata }, { idempotencyKey: `plan-${plan.id}-product` }),
      )
    ).id;
  await deps.db.membershipPlan.updateMany({
    where: { id: plan.id, stripeProductId: null },
    data: { stripeProductId: productId },
  });
  const price = await providerCall(() =>
    stripe.prices.create(
      {
        product: productId,
        unit_amount: plan.priceCents,
        currency: plan.currency.toLowerCase(),
        recurring: { interval: plan.interval!, interval_count: plan.intervalCount },
        metadata,
      },
      { idempotencyKey: `plan-${plan.id}-price` },
    ),
  );
  await deps.db.membershipPlan.updateMany({
    where: { id: plan.id, stripePriceId: null },
    data: { stripePriceId: price.id },
  });
  return deps.db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id }, include: WITH_BENEFITS });
}
