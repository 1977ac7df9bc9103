import type { LookupAll } from '@booking/address-policy';
import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { enqueueDeliveries, type DeliveryQueue } from '@booking/webhook-queue';
import { endpointView } from './endpoint-view';
import { assertReceiverUrl } from './receiver-url';
import type { CreateEndpointRequest } from './webhook-schemas';

type Deps = { db: Db; config: Config; deliveryQueue: DeliveryQueue };

const ROTATION_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

/** An endpoint of the tenant that is not deleted; another tenant's simply does not exist. */
export async function findEndpoint(db: Db, tenantId: string, id: string) {
  const endpoint = await db.webhookEndpoint.findFirst({ where: { id, tenantId, deletedAt: null } });
  if (!endpoint) throw new AppError('webhook_endpoint_not_found');
  return endpoint;
}

export async function createEndpoint(
  deps: Deps & { lookupHost: LookupAll },
  tenantId: string,
  request: CreateEndpointRequest,
) {
  const url = await assertReceiverUrl(request.url, {
    allowPrivate: deps.config.webhooks.allowPrivateUrls,
    lookupAll: deps.lookupHost,
  });
  const secret = generateWebhookSecret();
  const endpoint = await deps.db.webhookEndpoint.create({
    data: {
      tenantId,
      url,
      events: request.events ?? [],
      secretCiphertext: sealSecret(deps.config.webhooks.secretKey, secret),
    },
  });
  return { ...endpointView(endpoint), signing_secret: secret };
}

export async function listEndpoints(db: Db, tenantId: string) {
  const endpoints = await db.webhookEndpoint.findMany({
    where: { tenantId, deletedAt: null },
    orderBy: { createdAt: 'asc' },
  });
  return { data: endpoints.map(endpointView) };
}

/** Nothing more is sent: queued jobs find the endpoint deleted and give up. History is kept. */
export async function deleteEndpoint(db: Db, tenantId: string, id: string): Promise<void> {
  await findEndpoint(db, tenantId, id);
  await db.webhookEndpoint.update({ where: { id }, data: { deletedAt: new Date() } });
}

/** A new secret, shown once; the old one keeps signing X-Service-Signature-Previous for 7 days. */
export async function rotateSecret(deps: Deps, tenantId: string, id: string) {
  const endpoint = await findEndpoint(deps.db, tenantId, id);
  const secret = generateWebhookSecret();
  const rotated = await deps.db.webhookEndpoint.update({
    where: { id },
    data: {
      secretCiphertext: sealSecret(deps.config.webhooks.secretKey, secret),
      previousSecretCiphertext: endpoint.secretCiphertext,
      previousSecretExpiresAt: new Date(Date.now() + ROTATION_GRACE_MS),
    },
  });
  return { ...endpointView(rotated), signing_secret: secret };
}

/** Re-enables an endpoint and sends what waited while it was disabled, on a fresh schedule. */
export async function resumeEndpoint(deps: Deps, tenantId: string, id: string) {
  await findEndpoint(deps.db, tenantId, id);
  const { endpoint, waiting } = await deps.db.$transaction(async (tx) => {
    const endpoint = await tx.webhookEndpoint.update({
      where: { id },
      data: { status: 'active', consecutiveFailures: 0, disabledAt: null },
    });
    const waiting = await tx.webhookDelivery.findMany({
      where: { endpointId: id, status: 'waiting' },
      select: { id: true },
    });
    await tx.webhookDelivery.updateMany({
      where: { endpointId: id, status: 'waiting' },
      data: { status: 'pending', attemptCount: 0 },
    });
    return { endpoint, waiting };
  });
  await enqueueDeliveries(deps.deliveryQueue, waiting, deps.config.webhooks.retryDelaysMs);
  return { ...endpointView(endpoint), resumed_deliveries: waiting.length };
}
