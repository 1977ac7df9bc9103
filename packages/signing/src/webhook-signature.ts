import { createHmac, randomBytes } from 'node:crypto';

/** `v1,` + lowercase hex HMAC-SHA256 over `<timestamp>.<rawBody>`, the spec's delivery signature. */
export function signWebhookPayload(secret: string, timestampMs: number, rawBody: string): string {
  return `v1,${createHmac('sha256', secret).update(`${timestampMs}.${rawBody}`).digest('hex')}`;
}

/** A new endpoint signing secret: `whsec_` + 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
