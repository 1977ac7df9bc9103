import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { issueMemberTokens } from './issue-member-tokens';
import { UseBenefitRequest, UseGuestPassesRequest } from './membership-use-schemas';
import { useBenefit } from './use-benefit';
import { useGuestPasses } from './use-guest-passes';

const parseBenefitUse = createParser(UseBenefitRequest);
const parseGuestPassUse = createParser(UseGuestPassesRequest);

const membershipId = (req: Request) => idParam(req, 'membership_not_found');
const benefitId = (req: Request) => idParam(req, 'benefit_not_found', 'benefitId');

/**
 * Using a membership at the desk (staff+): hand the member their tokens, record benefit uses and
 * guest passes. Each honours Idempotency-Key per API key, so a till retrying after a lost answer
 * records the use once (and gets the same tokens back).
 */
export function membershipUseRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const byApiKey = (req: Request) => operatorOf(req).keyId;
  const once = idempotencyFor(deps.redis, deps.config);

  router.post('/api/v1/memberships/:id/tokens', staff, once('membership-tokens', byApiKey), async (req, res) => {
    res.status(201).json(await issueMemberTokens(deps, operatorOf(req), membershipId(req)));
  });
  router.post(
    '/api/v1/memberships/:id/benefits/:benefitId/use',
    staff,
    once('membership-benefit-use', byApiKey),
    async (req, res) => {
      const ids = { membershipId: membershipId(req), benefitId: benefitId(req) };
      res.status(201).json(await useBenefit(deps.db, operatorOf(req), ids, parseBenefitUse(req.body)));
    },
  );
  router.post(
    '/api/v1/memberships/:id/guest-passes/use',
    staff,
    once('membership-guest-pass-use', byApiKey),
    async (req, res) => {
      const id = membershipId(req);
      res.status(201).json(await useGuestPasses(deps.db, operatorOf(req), id, parseGuestPassUse(req.body)));
    },
  );
}
