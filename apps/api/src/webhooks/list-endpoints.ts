import type { Db } from '@booking/db';
import { endpointView } from './endpoint-view';

/** The tenant's endpoints that are not deleted, oldest first. */
export async function listEndpoints(db: Db, tenantId: string) {
  const endpoints = await db.webhookEndpoint.findMany({
    where: { tenantId, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
  return { data: endpoints.map(endpointView) };
}
