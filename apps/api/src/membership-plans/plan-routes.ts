import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor, idempotencyRef, markReplayed } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { createPlan } from './create-plan';
import { getPlan, listPlans } from './list-plans';
import { listWidgetPlans } from './list-widget-plans';
import { CreatePlanRequest, PlansQuery, UpdatePlanRequest, WidgetPlansQuery } from './plan-schemas';
import { updatePlan } from './update-plan';

const parseCreate = createParser(CreatePlanRequest);
const parseUpdate = createParser(UpdatePlanRequest);
const parseQuery = createParser(PlansQuery, 'invalid_query');
const parseWidgetQuery = createParser(WidgetPlansQuery, 'invalid_query');

const planId = (req: Request) => idParam(req, 'membership_plan_not_found');

/**
 * Membership plans: admins create and change them, staff read them, and the anonymous widget
 * lists the active plans of a published tenant. Creating honours Idempotency-Key, which is also
 * how a create that Stripe failed is completed.
 */
export function membershipPlanRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const admin = requireRole(deps.db, 'admin');
  const byApiKey = (req: Request) => operatorOf(req).keyId;
  const once = idempotencyFor(deps.redis, deps.config);

  router.post('/api/v1/membership-plans', admin, once('membership-plan', byApiKey), async (req, res) => {
    const { plan, replayed } = await createPlan(deps, operatorOf(req), parseCreate(req.body), idempotencyRef(res));
    if (replayed) markReplayed(res);
    res.status(201).json(plan);
  });
  router.get('/api/v1/membership-plans', staff, async (req, res) => {
    res.json(await listPlans(deps.db, operatorOf(req).tenantId, parseQuery(req.query)));
  });
  router.get('/api/v1/membership-plans/:id', staff, async (req, res) => {
    res.json(await getPlan(deps.db, operatorOf(req).tenantId, planId(req)));
  });
  router.patch('/api/v1/membership-plans/:id', admin, async (req, res) => {
    res.json(await updatePlan(deps.db, operatorOf(req), planId(req), parseUpdate(req.body)));
  });
  router.get('/api/widget/membership-plans', async (req, res) => {
    res.json(await listWidgetPlans(deps.db, parseWidgetQuery(req.query)));
  });
}
