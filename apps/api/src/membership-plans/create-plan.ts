import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import type { Operator } from '../operators/api-key-auth';
import { ensurePlanPrice } from './ensure-plan-price';
import { assertPlanShape } from './plan-rules';
import type { CreatePlanRequest, PlanView } from './plan-schemas';
import { planView, WITH_BENEFITS } from './plan-view';

/**
 * Creates a membership plan (admin). A recurring plan is sold on a Stripe Price: the plan row is
 * written first, then its Product and Price are made (see ensurePlanPrice), then their ids
 * stored. When Stripe fails the answer is 502/503 and the plan is kept without them; the same
 * request retried with its Idempotency-Key names the same plan (its id is derived from the key)
 * and completes it instead of making a second. A purchase of such a plan completes it too.
 */
export async function createPlan(
  deps: { db: Db; stripe: Stripe | null },
  operator: Operator,
  request: CreatePlanRequest,
  idempotencyRef: string | undefined,
): Promise<{ plan: PlanView; replayed: boolean }> {
  const recurring = request.billing === 'recurring';
  const shape = {
    billing: request.billing,
    termDays: request.term_days ?? null,
    termMonths: request.term_months ?? null,
    interval: request.interval ?? null,
    freezeMinDays: request.freeze_min_days ?? 7,
    freezeMaxDays: request.freeze_max_days ?? Math.max(90, request.freeze_min_days ?? 7),
    freezeFeeCents: request.freeze_fee_cents ?? 0,
    benefitNames: (request.benefits ?? []).map((benefit) => benefit.name),
  };
  assertPlanShape(shape);
  if (!recurring && request.interval_count !== undefined) {
    throw new AppError('plan_invalid', { problems: ['a fixed-term plan has no interval_count'] });
  }

  const planId = idempotencyRef === undefined ? randomUUID() : planIdOf(idempotencyRef);
  const existing = await deps.db.membershipPlan.findFirst({
    where: { id: planId, tenantId: operator.tenantId },
    include: WITH_BENEFITS,
  });
  const plan =
    existing ??
    (await deps.db.membershipPlan.create({
      data: {
        id: planId,
        tenantId: operator.tenantId,
        name: request.name,
        description: request.description ?? null,
        active: request.active ?? true,
        billing: request.billing,
        priceCents: request.price_cents,
        currency: request.currency,
        termDays: shape.termDays,
        termMonths: shape.termMonths,
        interval: shape.interval,
        intervalCount: recurring ? (request.interval_count ?? 1) : 1,
        allowancePeriod: request.allowance_period ?? 'month',
        visitsPerPeriod: request.visits_per_period ?? null,
        guestPassesPerPeriod: request.guest_passes_per_period ?? 0,
        memberDiscountPercent: request.member_discount_percent ?? 0,
        discountOnBookings: request.discount_on_bookings ?? true,
        discountOnRetail: request.discount_on_retail ?? true,
        freezeAllowed: request.freeze_allowed ?? false,
        freezeMinDays: shape.freezeMinDays,
        freezeMaxDays: shape.freezeMaxDays,
        freezesPerYear: request.freezes_per_year ?? 1,
        freezeNoticeDays: request.freeze_notice_days ?? 0,
        freezeFeeCents: shape.freezeFeeCents,
        transferable: request.transferable ?? false,
        requiresPhoto: request.requires_photo ?? false,
        benefits: {
          create: (request.benefits ?? []).map((benefit) => ({
            name: benefit.name.trim(),
            quantityPerPeriod: benefit.quantity_per_period,
          })),
        },
      },
      include: WITH_BENEFITS,
    }));
  const complete = await ensurePlanPrice(deps, plan);
  return { plan: planView(complete), replayed: existing !== null };
}

/**
 * The plan id of a request with an Idempotency-Key: the same for every retry of it, so a retry
 * after Stripe failed (which is not stored as an answer) finishes the plan the first one wrote.
 */
function planIdOf(idempotencyRef: string): string {
  const hex = createHash('sha256').update(`membership-plan\n${idempotencyRef}`).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
