import { AppError } from '@booking/domain';
import { TokenError, verifyToken } from '@booking/signing';
import type { Request, RequestHandler } from 'express';
import type { AppDeps } from '../app-deps';
import { pathId } from '../http/path-params';
import { operatorOf, requireRole } from '../operators/api-key-auth';

/** Who changes a booking: an operator's API key, or the customer (keyId null) through a manage link. */
export interface AmendmentActor {
  tenantId: string;
  keyId: string | null;
}

function localsOf(req: Request): { amendmentActor?: AmendmentActor } {
  return req.res!.locals as { amendmentActor?: AmendmentActor };
}

/**
 * The tenant of the booking a manage token was issued for. The token names the booking and the
 * customer it was issued to, and is honoured only while that customer still holds the booking.
 */
async function actorFromManageToken(deps: AppDeps, token: string, bookingId: string): Promise<AmendmentActor> {
  const secret = deps.config.tokenSigningSecret;
  let claims: { subject: string; tenantId: string };
  try {
    claims = verifyToken(secret, 'manage', token);
  } catch (error) {
    if (error instanceof TokenError) throw new AppError(error.reason === 'expired' ? 'token_expired' : 'invalid_token');
    throw error;
  }
  const [tokenBookingId, customerId] = claims.subject.split(':');
  if (tokenBookingId !== bookingId || !customerId)
    throw new AppError('invalid_token', 'the token is for another booking');
  const holder = await deps.db.booking.findFirst({
    where: { id: bookingId, tenantId: claims.tenantId, customerId },
    select: { id: true },
  });
  if (!holder) throw new AppError('invalid_token', 'the booking has been transferred to another customer');
  return { tenantId: claims.tenantId, keyId: null };
}

/**
 * A manager+ tenant API key (`Authorization`), or, when no Authorization header is sent, the
 * customer's `X-Manage-Token` for the booking in the path. Neither is 401 `unauthorized`; a bad
 * or foreign token 401 `invalid_token`, an expired one 401 `token_expired`.
 */
export function requireManagerOrManageToken(deps: AppDeps): RequestHandler {
  const manager = requireRole(deps.db, 'manager');
  return async (req, res, next) => {
    const token = req.get('X-Manage-Token');
    if (token === undefined || req.get('Authorization') !== undefined) {
      await manager(req, res, (error?: unknown) => {
        if (error) return next(error);
        const operator = operatorOf(req);
        localsOf(req).amendmentActor = { tenantId: operator.tenantId, keyId: operator.keyId };
        next();
      });
      return;
    }
    localsOf(req).amendmentActor = await actorFromManageToken(deps, token, pathId(req));
    next();
  };
}

/** The actor `requireManagerOrManageToken` let through. */
export function amendmentActorOf(req: Request): AmendmentActor {
  const actor = localsOf(req).amendmentActor;
  if (!actor) throw new Error('amendmentActorOf used on a route without requireManagerOrManageToken');
  return actor;
}
