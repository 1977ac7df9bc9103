import type { Db, Prisma } from '@booking/db';
import { AppError } from '@booking/domain';
import type { PlanList, PlansQuery, PlanView } from './plan-schemas';
import { planView, WITH_BENEFITS } from './plan-view';

/** The tenant's plans, oldest first, keyed on (created_at, id) like every list of the v1 API. */
export async function listPlans(db: Db, tenantId: string, query: PlansQuery): Promise<PlanList> {
  const limit = Number(query.limit ?? 20);
  const after = query.starting_after
    ? await db.membershipPlan.findFirst({
        where: { id: query.starting_after, tenantId },
        select: { id: true, createdAt: true },
      })
    : null;
  if (query.starting_after && !after) throw new AppError('membership_plan_not_found', 'starting_after names no plan');
  const where: Prisma.MembershipPlanWhereInput = {
    tenantId,
    ...(query.active !== undefined && { active: query.active === 'true' }),
    ...(after && {
      OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }],
    }),
  };
  const rows = await db.membershipPlan.findMany({
    where,
    include: WITH_BENEFITS,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  return {
    data: page.map(planView),
    next_starting_after: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}

/** One plan of the tenant with its benefits; another tenant's is 404. */
export async function getPlan(db: Db, tenantId: string, planId: string): Promise<PlanView> {
  const plan = await db.membershipPlan.findFirst({ where: { id: planId, tenantId }, include: WITH_BENEFITS });
  if (!plan) throw new AppError('membership_plan_not_found');
  return planView(plan);
}
