import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { idParam, pathId } from '../http/path-params';
import { createParser } from '../http/validation';
import { membershipActorOf, requireRoleOrMembershipToken } from '../memberships/membership-actor';
import { scheduleFreezeRuns } from './freeze-runs-at';
import { bookFreeze } from './book-freeze';
import { cancelFreeze } from './cancel-freeze';
import { BookFreezeRequest, CancelFreezeRequest } from './freeze-schemas';

const parseBook = createParser(BookFreezeRequest);
const parseCancel = createParser(CancelFreezeRequest);

const membershipId = (req: Request) => idParam(req, 'membership_not_found');
const freezeId = (req: Request) => idParam(req, 'freeze_not_found', 'freezeId');

/** A staff member's key, or the member's own self-service token (one client per membership). */
const byActor = (req: Request) => membershipActorOf(req).keyId ?? `member:${pathId(req)}`;

/**
 * Freezes of a membership, booked and cancelled by a manager or by the member with the
 * membership's X-Membership-Token. The lifecycle worker starts and ends them (start-freezes.ts,
 * end-freezes.ts).
 */
export function freezeRoutes(router: IRouter, deps: AppDeps): void {
  const managerOrMember = requireRoleOrMembershipToken(deps, 'manager');
  const once = idempotencyFor(deps.redis, deps.config);

  router.post(
    '/api/v1/memberships/:id/freezes',
    managerOrMember,
    once('membership-freeze', byActor),
    async (req, res) => {
      const request = parseBook(req.body);
      const freeze = await bookFreeze(deps.db, membershipActorOf(req), membershipId(req), request);
      await scheduleFreezeRuns(deps, freeze.freeze_id);
      res.status(201).json(freeze);
    },
  );
  router.post('/api/v1/memberships/:id/freezes/:freezeId/cancel', managerOrMember, async (req, res) => {
    const ids = { membershipId: membershipId(req), freezeId: freezeId(req) };
    const request = parseCancel(req.body ?? {});
    res.json(await cancelFreeze(deps, membershipActorOf(req), ids, request));
  });
}
