export {
  verifyWebhook,
  signWebhook,
  WebhookVerificationError,
  WEBHOOK_HEADERS,
  SIGNATURE_PREFIX,
  DEFAULT_TOLERANCE_MS,
} from './verify-webhook';
export type {
  VerifyWebhookOptions,
  WebhookEnvelope,
  WebhookEvent,
  WebhookTestDelivery,
  WebhookHeaders,
  WebhookVerificationFailure,
} from './verify-webhook';
export { webhookMiddleware, MAX_BODY_BYTES } from './middleware';
export type { WebhookMiddlewareOptions } from './middleware';
