import type { RequestedBy } from '@booking/db';
import { AppError } from '@booking/domain';
import { TokenError, verifyToken } from '@booking/signing';
import type { Request, RequestHandler } from 'express';
import type { AppDeps } from '../app-deps';
import { pathId } from '../http/path-params';
import { operatorOf, requireRole } from '../operators/api-key-auth';

/**
 * Who changes a membership: staff with a tenant API key, or the member (keyId null) through the
 * self-service link's `X-Membership-Token`. Use cases record `requested_by` and the actor from it.
 */
export interface MembershipActor {
  tenantId: string;
  keyId: string | null;
  requestedBy: RequestedBy;
}

function localsOf(req: Request): { membershipActor?: MembershipActor } {
  return req.res!.locals as { membershipActor?: MembershipActor };
}

async function actorFromToken(deps: AppDeps, token: string, membershipId: string): Promise<MembershipActor> {
  let claims: { subject: string; tenantId: string };
  try {
    claims = verifyToken(deps.config.tokenSigningSecret, 'membership_manage', token);
  } catch (error) {
    if (error instanceof TokenError) throw new AppError(error.reason === 'expired' ? 'token_expired' : 'invalid_token');
    throw error;
  }
  const [tokenMembershipId, version] = claims.subject.split(':');
  if (tokenMembershipId !== membershipId) throw new AppError('invalid_token', 'the token is for another membership');
  const membership = await deps.db.membership.findFirst({
    where: { id: membershipId, tenantId: claims.tenantId },
    select: { tokenVersion: true },
  });
  // A holder change bumps the version: links handed out before it no longer manage the membership.
  if (!membership || membership.tokenVersion !== Number(version)) {
    throw new AppError('invalid_token', 'the token was replaced when the membership changed holder');
  }
  return { tenantId: claims.tenantId, keyId: null, requestedBy: 'member' };
}

/**
 * A tenant API key of at least `role` (`Authorization`), or, when no Authorization header is
 * sent, the member's `X-Membership-Token` for the membership in the path. Neither is 401
 * `unauthorized`; a bad or foreign token 401 `invalid_token`, an expired one 401 `token_expired`.
 */
export function requireRoleOrMembershipToken(deps: AppDeps, role: 'staff' | 'manager'): RequestHandler {
  const operator = requireRole(deps.db, role);
  return async (req, res, next) => {
    const token = req.get('X-Membership-Token');
    if (token === undefined || req.get('Authorization') !== undefined) {
      await operator(req, res, (error?: unknown) => {
        if (error) return next(error);
        const { tenantId, keyId } = operatorOf(req);
        localsOf(req).membershipActor = { tenantId, keyId, requestedBy: 'staff' };
        next();
      });
      return;
    }
    localsOf(req).membershipActor = await actorFromToken(deps, token, pathId(req));
    next();
  };
}

/** The actor `requireRoleOrMembershipToken` let through. */
export function membershipActorOf(req: Request): MembershipActor {
  const actor = localsOf(req).membershipActor;
  if (!actor) throw new Error('membershipActorOf used on a route without requireRoleOrMembershipToken');
  return actor;
}
