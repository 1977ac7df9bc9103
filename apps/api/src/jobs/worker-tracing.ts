import { startProcessTracing } from '@booking/tracing';

/**
 * Tracing of the lifecycle worker, on when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/tracing.md).
 * worker-main.ts imports this first: http, pg and ioredis are traced only if they load after it.
 */
export const tracing = startProcessTracing({ serviceName: 'booking-worker' });
