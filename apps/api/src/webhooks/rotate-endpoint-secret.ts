import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { endpointView } from './endpoint-view';
import { findEndpoint } from './find-endpoint';

const ROTATION_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

/** A new secret, shown once; the old one keeps signing X-Service-Signature-Previous for 7 days. */
export async function rotateEndpointSecret(deps: { db: Db; config: Config }, tenantId: string, id: string) {
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
