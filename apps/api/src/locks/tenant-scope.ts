/**
 * Whose rows a lock may find. Operator and customer routes pass their tenant, so another
 * tenant's row is simply not found. `anyTenant` is for callers authenticated some other way
 * (signature-verified provider notifications, the worker's cross-tenant jobs, which read the
 * tenant from the row itself) and for locking again a row this request already found in its
 * tenant.
 */
export type TenantScope = { tenantId: string } | { anyTenant: true };

export const ANY_TENANT: TenantScope = { anyTenant: true };

/** The scope as a nullable SQL parameter: `(${t}::uuid IS NULL OR tenant_id = ${t}::uuid)`. */
export function scopedTenant(scope: TenantScope): string | null {
  return 'tenantId' in scope ? scope.tenantId : null;
}
