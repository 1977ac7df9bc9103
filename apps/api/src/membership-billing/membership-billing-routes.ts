import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { membershipActorOf, requireRoleOrMembershipToken } from '../memberships/membership-actor';
import { cancelMembership } from './cancel-membership';
import { CancelMembershipRequest } from './membership-billing-schemas';

const parseCancel = createParser(CancelMembershipRequest);

/**
 * Ending a membership: a manager's API key, or the member's own X-Membership-Token (at period end
 * only). Repeating the request is harmless: an ended membership answers 409 membership_not_active,
 * and the provider calls are keyed by the membership.
 */
export function membershipBillingRoutes(router: IRouter, deps: AppDeps): void {
  router.post('/api/v1/memberships/:id/cancel', requireRoleOrMembershipToken(deps, 'manager'), async (req, res) => {
    const membershipId = idParam(req, 'membership_not_found');
    const request = parseCancel(req.body);
    res.json(await cancelMembership(deps, membershipActorOf(req), membershipId, request));
  });
}
