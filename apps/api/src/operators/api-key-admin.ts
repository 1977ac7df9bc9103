import type { Db } from '@booking/db';
import { generateApiKey } from '@booking/signing';
import type { Role } from './api-key-auth';

export const ROLES: readonly Role[] = ['staff', 'manager', 'admin'];

/** Scopes a key may carry, and the role a key needs to carry each. */
export const SCOPES: Readonly<Record<string, Role>> = { 'webhooks:write': 'admin' };

export type ApiKeyAdminErrorCode =
  'invalid_role' | 'invalid_scope' | 'invalid_name' | 'tenant_not_found' | 'key_not_found';

/** A refused key operation: `invalid_*` are the caller's mistakes, `*_not_found` name nothing stored. */
export class ApiKeyAdminError extends Error {
  override name = 'ApiKeyAdminError';
  constructor(
    readonly code: ApiKeyAdminErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A key as people auditing keys see it: never its secret nor the secret's hash. */
export interface ApiKeySummary {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A new key: `key` is the only copy of the secret there will ever be. */
export interface CreatedApiKey extends ApiKeySummary {
  key: string;
  tenant: { id: string; slug: string };
}

export interface RevokedApiKey {
  prefix: string;
  revoked_at: string;
  /** True when the key was revoked before: nothing changed. */
  already_revoked: boolean;
}

const MAX_NAME_LENGTH = 200;

function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

function summarize(key: {
  id: string;
  prefix: string;
  name: string;
  role: Role;
  scopes: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}): ApiKeySummary {
  return {
    id: key.id,
    prefix: key.prefix,
    name: key.name,
    role: key.role,
    scopes: key.scopes,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}

async function tenantBySlug(db: Db, slug: string): Promise<{ id: string; slug: string }> {
  const tenant = await db.tenant.findUnique({ where: { slug }, select: { id: true, slug: true } });
  if (!tenant) throw new ApiKeyAdminError('tenant_not_found', `no tenant with slug "${slug}"`);
  return tenant;
}

/** Checks role, scopes and name without touching the database. */
export function validateKeyRequest(request: { role: string; scopes?: string[]; name?: string }): {
  role: Role;
  scopes: string[];
  name: string | undefined;
} {
  if (!isRole(request.role)) {
    throw new ApiKeyAdminError('invalid_role', `role must be one of ${ROLES.join(', ')} (got "${request.role}")`);
  }
  const role = request.role;
  const scopes = [...new Set(request.scopes ?? [])];
  for (const scope of scopes) {
    const needed = SCOPES[scope];
    if (!needed) {
      throw new ApiKeyAdminError(
        'invalid_scope',
        `unknown scope "${scope}"; known scopes: ${Object.keys(SCOPES).join(', ')}`,
      );
    }
    if (needed !== role)
      throw new ApiKeyAdminError('invalid_scope', `scope "${scope}" is only allowed on ${needed} keys`);
  }
  const name = request.name?.trim();
  if (name !== undefined && (name.length === 0 || name.length > MAX_NAME_LENGTH)) {
    throw new ApiKeyAdminError('invalid_name', `name must be 1 to ${MAX_NAME_LENGTH} characters`);
  }
  return { role, scopes, name };
}

/** Issues a key for a tenant. Only the prefix and the SHA-256 of the secret are stored. */
export async function createApiKey(
  db: Db,
  request: { tenantSlug: string; role: string; name?: string; scopes?: string[] },
): Promise<CreatedApiKey> {
  const { role, scopes, name } = validateKeyRequest(request);
  const tenant = await tenantBySlug(db, request.tenantSlug);
  const generated = generateApiKey();
  const key = await db.apiKey.create({
    data: {
      tenantId: tenant.id,
      name: name ?? `${role} key`,
      prefix: generated.prefix,
      secretHash: generated.secretHash,
      role,
      scopes,
    },
  });
  return { ...summarize(key), key: generated.token, tenant };
}

/** A tenant's keys, oldest first, revoked ones included. */
export async function listApiKeys(db: Db, tenantSlug: string): Promise<ApiKeySummary[]> {
  const tenant = await tenantBySlug(db, tenantSlug);
  const keys = await db.apiKey.findMany({
    where: { tenantId: tenant.id },
    orderBy: [{ createdAt: 'asc' }, { prefix: 'asc' }],
    select: {
      id: true,
      prefix: true,
      name: true,
      role: true,
      scopes: true,
      createdAt: true,
      lastUsedAt: true,
      revokedAt: true,
    },
  });
  return keys.map(summarize);
}

/**
 * Revokes a key by its prefix; from then on it is 401 `unauthorized`. Revoking a revoked key
 * changes nothing. With `tenantSlug`, a key of another tenant is not found.
 */
export async function revokeApiKey(
  db: Db,
  prefix: string,
  options: { tenantSlug?: string } = {},
): Promise<RevokedApiKey> {
  const tenant = options.tenantSlug === undefined ? null : await tenantBySlug(db, options.tenantSlug);
  const where = { prefix, ...(tenant ? { tenantId: tenant.id } : {}) };
  const revokedAt = new Date();
  // Only an unrevoked key is updated, so the first revocation time is the one kept.
  const { count } = await db.apiKey.updateMany({ where: { ...where, revokedAt: null }, data: { revokedAt } });
  if (count === 1) return { prefix, revoked_at: revokedAt.toISOString(), already_revoked: false };
  const key = await db.apiKey.findFirst({ where, select: { revokedAt: true } });
  if (!key?.revokedAt) throw new ApiKeyAdminError('key_not_found', `no API key with prefix "${prefix}"`);
  return { prefix, revoked_at: key.revokedAt.toISOString(), already_revoked: true };
}
