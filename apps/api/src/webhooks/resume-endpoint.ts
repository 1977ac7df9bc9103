import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import type { DeliveryQueue } from '@booking/webhook-queue';
import { endpointView } from './endpoint-view';
import { findEndpoint } from './find-endpoint';
import { resendInChunks } from './resend-in-chunks';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

/**
 * Re-enables an endpoint and sends what waited while it was disabled, on a fresh schedule. The
 * endpoint is active first, so what the relay writes from then on is pending; then the waiting
 * deliveries are sent in chunks (resendInChunks), however many a long outage left.
 */
export async function resumeEndpoint(deps: Deps, tenantId: string, id: string) {
  await findEndpoint(deps.db, tenantId, id);
  const endpoint = await deps.db.webhookEndpoint.update({
    where: { id },
    data: { status: 'active', consecutiveFailures: 0, disabledAt: null },
  });
  const resumed = await resendInChunks(deps, id, { status: 'waiting' });
  return { ...endpointView(endpoint), resumed_deliveries: resumed };
}
