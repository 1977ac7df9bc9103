import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { parseApiKey, secretMatches } from '@booking/signing';
import type { Request, RequestHandler } from 'express';

export type Role = 'staff' | 'manager' | 'admin';

const RANK: Record<Role, number> = { staff: 1, manager: 2, admin: 3 };

/** Who is calling an operator route: the key's tenant, role and scopes. */
export interface Operator {
  tenantId: string;
  keyId: string;
  role: Role;
  scopes: string[];
}

// last_used_at is for people auditing keys; a minute's precision spares a write per request.
const LAST_USED_PRECISION_MS = 60_000;

/** The key from `Bearer <key>`; scheme names are case-insensitive (RFC 9110). */
function keyFromHeader(header: string | undefined): string | undefined {
  const [, scheme, credentials] = header?.match(/^(\w+) (.+)$/) ?? [];
  return scheme?.toLowerCase() === 'bearer' ? credentials : undefined;
}

async function authenticate(db: Db, header: string | undefined): Promise<Operator> {
  const token = keyFromHeader(header);
  const parsed = token ? parseApiKey(token) : null;
  if (!parsed) throw new AppError('unauthorized');
  const key = await db.apiKey.findUnique({ where: { prefix: parsed.prefix } });
  if (!key || key.revokedAt !== null || !secretMatches(parsed.secret, key.secretHash))
    throw new AppError('unauthorized');
  if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > LAST_USED_PRECISION_MS) {
    await db.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date() } });
  }
  return { tenantId: key.tenantId, keyId: key.id, role: key.role, scopes: key.scopes };
}

/**
 * Requires a tenant API key (`Authorization: Bearer svc_<prefix>.<secret>`) whose role is at
 * least `role` and, when given, that carries `scope`. Missing, malformed, unknown or revoked keys
 * are 401 `unauthorized`; a weaker role or a missing scope is 403 `forbidden`.
 */
export function requireRole(db: Db, role: Role, options: { scope?: string } = {}): RequestHandler {
  return async (req, _res, next) => {
    const operator = await authenticate(db, req.get('Authorization'));
    if (RANK[operator.role] < RANK[role]) {
      throw new AppError('forbidden', `this action needs the ${role} role or higher`);
    }
    if (options.scope && !operator.scopes.includes(options.scope)) {
      throw new AppError('forbidden', `this action needs a key with the ${options.scope} scope`);
    }
    localsOf(req).operator = operator;
    next();
  };
}

function localsOf(req: Request): { operator?: Operator } {
  return req.res!.locals as { operator?: Operator };
}

/**
 * For an option of a route that needs more than the route's role (say a manager confirming a
 * till order unpaid): 403 forbidden unless the operator has at least `role`.
 */
export function assertRole(operator: Operator, role: Role, what: string): void {
  if (RANK[operator.role] < RANK[role]) throw new AppError('forbidden', `${what} needs the ${role} role or higher`);
}

/** The operator `requireRole` authenticated for this request. */
export function operatorOf(req: Request): Operator {
  const operator = localsOf(req).operator;
  if (!operator) throw new Error('operatorOf used on a route without requireRole');
  return operator;
}
