import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { listMemberships } from './list-memberships';
import { MembershipsQuery } from './membership-schemas';
import { loadMembershipView } from './membership-view';

const parseQuery = createParser(MembershipsQuery, 'invalid_query');
const membershipId = (req: Request) => idParam(req, 'membership_not_found');

/** Operator reads of memberships (staff+): the list, and one with its uses, freezes, changes and invoices. */
export function membershipRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  router.get('/api/v1/memberships', staff, async (req, res) => {
    res.json(await listMemberships(deps.db, operatorOf(req).tenantId, parseQuery(req.query)));
  });
  router.get('/api/v1/memberships/:id', staff, async (req, res) => {
    res.json(await loadMembershipView(deps.db, operatorOf(req).tenantId, membershipId(req)));
  });
}
