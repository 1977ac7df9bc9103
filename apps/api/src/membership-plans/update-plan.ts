import type { Db, Prisma } from '@booking/db';
import { AppError, LIVE_MEMBERSHIP_STATUSES } from '@booking/domain';
import type { Operator } from '../operators/api-key-auth';
import { assertPlanShape } from './plan-rules';
import type { PlanView, UpdatePlanRequest } from './plan-schemas';
import { planView, WITH_BENEFITS } from './plan-view';

/**
 * Changes what a plan offers (admin): name, description, active, allowances, discount, freeze
 * rules, transferable, photo, benefits. Billing, price and interval are not changed here (a
 * price change is its own route: live subscriptions must be moved to a new Stripe Price).
 * Changes apply to the plan's memberships as they are counted from then on.
 *
 * `benefits` is the whole list, matched by name: a listed name keeps its benefit (and its uses)
 * with the new quantity, a new name is added, and a missing one is removed, unless it was used
 * already (400 plan_invalid: its uses would lose their benefit; rename or keep it).
 * allowance_period changes only while no live membership counts its uses by it (400 plan_invalid).
 */
export async function updatePlan(
  db: Db,
  operator: Operator,
  planId: string,
  request: UpdatePlanRequest,
): Promise<PlanView> {
  return db.$transaction(async (tx) => {
    const [locked] = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM membership_plans WHERE id = ${planId}::uuid AND tenant_id = ${operator.tenantId}::uuid FOR UPDATE`;
    if (!locked) throw new AppError('membership_plan_not_found');
    const plan = await tx.membershipPlan.findUniqueOrThrow({ where: { id: planId }, include: WITH_BENEFITS });
    const next = {
      freezeMinDays: request.freeze_min_days ?? plan.freezeMinDays,
      freezeMaxDays: request.freeze_max_days ?? plan.freezeMaxDays,
      freezeFeeCents: request.freeze_fee_cents ?? plan.freezeFeeCents,
    };
    assertPlanShape({
      billing: plan.billing,
      termDays: plan.termDays,
      termMonths: plan.termMonths,
      interval: plan.interval,
      ...next,
      benefitNames: (request.benefits ?? plan.benefits).map((benefit) => benefit.name),
    });

    // Uses are counted by period key: switching month ⇄ term would start every live member's
    // allowance afresh (their uses keep the old keys), so it is refused while the plan has any.
    if (request.allowance_period && request.allowance_period !== plan.allowancePeriod) {
      const live = await tx.membership.count({
        where: { planId, status: { in: [...LIVE_MEMBERSHIP_STATUSES] } },
      });
      if (live > 0) {
        throw new AppError('plan_invalid', {
          problems: [`allowance_period cannot change while ${live} live memberships count their uses by it`],
        });
      }
    }

    const data: Prisma.MembershipPlanUpdateInput = {
      name: request.name,
      description: request.description,
      active: request.active,
      allowancePeriod: request.allowance_period,
      visitsPerPeriod: request.visits_per_period,
      guestPassesPerPeriod: request.guest_passes_per_period,
      memberDiscountPercent: request.member_discount_percent,
      discountOnBookings: request.discount_on_bookings,
      discountOnRetail: request.discount_on_retail,
      freezeAllowed: request.freeze_allowed,
      freezeMinDays: request.freeze_min_days,
      freezeMaxDays: request.freeze_max_days,
      freezesPerYear: request.freezes_per_year,
      freezeNoticeDays: request.freeze_notice_days,
      freezeFeeCents: request.freeze_fee_cents,
      transferable: request.transferable,
      requiresPhoto: request.requires_photo,
    };
    await tx.membershipPlan.update({ where: { id: planId }, data });

    if (request.benefits) {
      const wanted = new Map(request.benefits.map((benefit) => [benefit.name.trim(), benefit.quantity_per_period]));
      for (const benefit of plan.benefits) {
        if (wanted.has(benefit.name)) {
          await tx.planBenefit.update({
            where: { id: benefit.id },
            data: { quantityPerPeriod: wanted.get(benefit.name) ?? null },
          });
          wanted.delete(benefit.name);
        } else {
          const used = await tx.membershipUsage.count({ where: { benefitId: benefit.id } });
          if (used > 0) {
            throw new AppError('plan_invalid', {
              problems: [`benefit "${benefit.name}" has been used and cannot be removed`],
            });
          }
          await tx.planBenefit.delete({ where: { id: benefit.id } });
        }
      }
      for (const [name, quantityPerPeriod] of wanted) {
        await tx.planBenefit.create({ data: { planId, name, quantityPerPeriod } });
      }
    }
    return planView(await tx.membershipPlan.findUniqueOrThrow({ where: { id: planId }, include: WITH_BENEFITS }));
  });
}
