import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { idParam, pathId } from '../http/path-params';
import { createParser } from '../http/validation';
import { membershipActorOf, requireRoleOrMembershipToken } from '../memberships/membership-actor';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { PlanChangeRequest, PriceChangeRequest } from './change-schemas';
import { requestPlanChange } from './request-plan-change';
import { schedulePriceChange } from './schedule-price-change';
import { withdrawPlanChange } from './withdraw-plan-change';

const parsePlanChange = createParser(PlanChangeRequest);
const parsePriceChange = createParser(PriceChangeRequest);
const membershipId = (req: Request) => idParam(req, 'membership_not_found');
const planId = (req: Request) => idParam(req, 'membership_plan_not_found');

/**
 * Plan changes (a manager, or the member with the self-service token) and an admin's price
 * change of a recurring plan. POSTs honour Idempotency-Key: a retried request is one change.
 */
export function membershipChangeRoutes(router: IRouter, deps: AppDeps): void {
  const managerOrMember = requireRoleOrMembershipToken(deps, 'manager');
  const admin = requireRole(deps.db, 'admin');
  const once = idempotencyFor(deps.redis, deps.config);
  const byActor = (req: Request) => membershipActorOf(req).keyId ?? `member:${pathId(req)}`;

  router.post(
    '/api/v1/memberships/:id/plan-change',
    managerOrMember,
    once('plan-change', byActor),
    async (req, res) => {
      const id = membershipId(req);
      res.status(201).json(await requestPlanChange(deps, membershipActorOf(req), id, parsePlanChange(req.body)));
    },
  );
  router.delete('/api/v1/memberships/:id/plan-change', managerOrMember, async (req, res) => {
    res.json(await withdrawPlanChange(deps, membershipActorOf(req), membershipId(req)));
  });
  router.post(
    '/api/v1/membership-plans/:id/price-changes',
    admin,
    once('plan-price-change', (req) => operatorOf(req).keyId),
    async (req, res) => {
      const id = planId(req);
      res.status(201).json(await schedulePriceChange(deps, operatorOf(req), id, parsePriceChange(req.body)));
    },
  );
}
