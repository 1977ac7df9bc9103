import type { Db } from '@booking/db';
import { findEndpoint } from './find-endpoint';

/** Nothing more is sent: queued jobs find the endpoint deleted and give up. History is kept. */
export async function deleteEndpoint(db: Db, tenantId: string, id: string): Promise<void> {
  await findEndpoint(db, tenantId, id);
  await db.webhookEndpoint.update({ where: { id }, data: { deletedAt: new Date() } });
}
