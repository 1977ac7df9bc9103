import type { LookupAll } from '@booking/address-policy';
import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { endpointView } from './endpoint-view';
import { assertReceiverUrl } from './receiver-url';
import type { CreateEndpointRequest } from './webhook-schemas';

/** Subscribes a receiver URL (checked as delivery would check it); the signing secret is shown once, stored sealed. */
export async function createEndpoint(
  deps: { db: Db; config: Config; lookupHost: LookupAll },
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
