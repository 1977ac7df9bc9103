import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { generateWebhookSecret, sealSecret } from '@booking/signing';
import { endpointView } from './endpoint-view';
import { findEndpoint } from './find-endpoint';

const ROTATION_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * A new secret, shown once; the old one keeps signing X-Service-Signature-Previous for 7 days.
 * One statement moves the secret the row holds when it runs to `previous`: two rotations at once
 * (a double submit reaching two replicas) queue on the row, so the second keeps the first's
 * secret as previous, and each caller's secret signs (read first and written after, the first's
 * would be lost, and its receiver would fail once the window closed).
 */
export async function rotateEndpointSecret(deps: { db: Db; config: Config }, tenantId: string, id: string) {
  const secret = generateWebhookSecret();
  const previousSecretExpiresAt = new Date(Date.now() + ROTATION_GRACE_MS);
  await deps.db.$executeRaw`
    UPDATE webhook_endpoints
    SET previous_secret_ciphertext = secret_ciphertext,
        secret_ciphertext = ${sealSecret(deps.config.webhooks.secretKey, secret)},
        previous_secret_expires_at = ${previousSecretExpiresAt},
        updated_at = now()
    WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid AND deleted_at IS NULL`;
  // Not found (another tenant's, deleted) answers 404; a rotation committed since shows its own
  // expiry here, and this caller's secret is its previous one.
  const rotated = await findEndpoint(deps.db, tenantId, id);
  return { ...endpointView(rotated), signing_secret: secret };
}
