import { startProcessTracing } from '@booking/tracing';
import { redactUrl } from './http/redact-url';

/**
 * Tracing of the API process, on when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/tracing.md).
 * main.ts imports this first: http, express, pg and ioredis are traced only if they load after it.
 * Request targets are recorded as the logs show them (redactUrl). The API serves the public, so
 * a request's trace starts here whatever trace context the client sends.
 */
export const tracing = startProcessTracing({
  serviceName: 'booking-api',
  redactTarget: redactUrl,
  ignoreIncomingContext: true,
});
