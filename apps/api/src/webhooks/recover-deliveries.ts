import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type { DeliveryQueue } from '@booking/webhook-queue';
import { findEndpoint } from './find-endpoint';
import { resendInChunks } from './resend-in-chunks';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

/** Resends every abandoned delivery of an endpoint created since a time (as Svix's recover), in chunks. */
export async function recoverDeliveries(deps: Deps, tenantId: string, endpointId: string, since: string) {
  const endpoint = await findEndpoint(deps.db, tenantId, endpointId);
  if (endpoint.status === 'disabled') {
    throw new AppError('webhook_endpoint_disabled', 'resume the endpoint first; its waiting deliveries are sent then');
  }
  return { recovered: await resendInChunks(deps, endpointId, { status: 'abandoned', since: new Date(since) }) };
}
