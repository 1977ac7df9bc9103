import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';

/** An endpoint of the tenant that is not deleted; another tenant's simply does not exist. */
export async function findEndpoint(db: Db, tenantId: string, id: string) {
  const endpoint = await db.webhookEndpoint.findFirst({ where: { id, tenantId, deletedAt: null } });
  if (!endpoint) throw new AppError('webhook_endpoint_not_found');
  return endpoint;
}
