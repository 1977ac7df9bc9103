import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type { WidgetPlanList, WidgetPlansQuery } from './plan-schemas';
import { WITH_BENEFITS, widgetPlanView } from './plan-view';

/** The plans a published tenant sells, for the anonymous widget: active ones, cheapest first. */
export async function listWidgetPlans(db: Db, query: WidgetPlansQuery): Promise<WidgetPlanList> {
  const tenant = await db.tenant.findFirst({ where: { slug: query.tenant, published: true }, select: { id: true } });
  if (!tenant) throw new AppError('tenant_not_found');
  const plans = await db.membershipPlan.findMany({
    where: { tenantId: tenant.id, active: true },
    include: WITH_BENEFITS,
    orderBy: [{ priceCents: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }],
    take: 100,
  });
  return { plans: plans.map(widgetPlanView) };
}
