import { signWebhookPayload } from '@booking/signing';
import type { EndpointSecrets } from './endpoint-secrets';

/**
 * The spec's delivery headers. During the 7 days after a rotation the previous secret signs
 * X-Service-Signature-Previous, so receivers still holding it keep verifying.
 */
export function signedHeaders(input: {
  deliveryId: string;
  eventName: string;
  body: string;
  secrets: EndpointSecrets;
  endpoint: { secretCiphertext: string; previousSecretCiphertext: string | null; previousSecretExpiresAt: Date | null };
  now: number;
}): Record<string, string> {
  const { endpoint, now } = input;
  const headers: Record<string, string> = {
    'X-Service-Delivery-Id': input.deliveryId,
    'X-Service-Event': input.eventName,
    'X-Service-Timestamp': String(now),
    'X-Service-Signature': signWebhookPayload(input.secrets.open(endpoint.secretCiphertext), now, input.body),
  };
  if (
    endpoint.previousSecretCiphertext &&
    endpoint.previousSecretExpiresAt &&
    endpoint.previousSecretExpiresAt.getTime() > now
  ) {
    headers['X-Service-Signature-Previous'] = signWebhookPayload(
      input.secrets.open(endpoint.previousSecretCiphertext),
      now,
      input.body,
    );
  }
  return headers;
}
