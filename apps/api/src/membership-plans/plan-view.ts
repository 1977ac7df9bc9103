import type { MembershipPlan, PlanBenefit } from '@booking/db';
import type { PlanView, WidgetPlan } from './plan-schemas';

export type PlanWithBenefits = MembershipPlan & { benefits: PlanBenefit[] };

/** How plans are read for an answer: with their benefits, by name. */
export const WITH_BENEFITS = { benefits: { orderBy: { name: 'asc' as const } } };

/** What anyone may see of a plan: the widget shows this to buyers. */
export function widgetPlanView(plan: PlanWithBenefits): WidgetPlan {
  return {
    plan_id: plan.id,
    name: plan.name,
    description: plan.description,
    billing: plan.billing,
    price_cents: plan.priceCents,
    currency: plan.currency,
    term_days: plan.termDays,
    term_months: plan.termMonths,
    interval: plan.interval,
    interval_count: plan.intervalCount,
    allowance_period: plan.allowancePeriod,
    visits_per_period: plan.visitsPerPeriod,
    guest_passes_per_period: plan.guestPassesPerPeriod,
    member_discount_percent: plan.memberDiscountPercent,
    discount_on_bookings: plan.discountOnBookings,
    discount_on_retail: plan.discountOnRetail,
    freeze_allowed: plan.freezeAllowed,
    freeze_min_days: plan.freezeMinDays,
    freeze_max_days: plan.freezeMaxDays,
    freezes_per_year: plan.freezesPerYear,
    freeze_notice_days: plan.freezeNoticeDays,
    freeze_fee_cents: plan.freezeFeeCents,
    transferable: plan.transferable,
    requires_photo: plan.requiresPhoto,
    benefits: [...plan.benefits]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((benefit) => ({
        benefit_id: benefit.id,
        name: benefit.name,
        quantity_per_period: benefit.quantityPerPeriod,
      })),
  };
}

/** A plan as operators read it. */
export function planView(plan: PlanWithBenefits): PlanView {
  return {
    ...widgetPlanView(plan),
    active: plan.active,
    stripe_product_id: plan.stripeProductId,
    stripe_price_id: plan.stripePriceId,
    created_at: plan.createdAt.toISOString(),
    updated_at: plan.updatedAt.toISOString(),
  };
}
