import { startProcessTracing } from '@booking/tracing';

/**
 * Tracing of the dispatcher process, on when OTEL_EXPORTER_OTLP_ENDPOINT is set
 * (docs/tracing.md). main.ts imports this first: http, pg and ioredis are traced only if they
 * load after it.
 */
export const tracing = startProcessTracing({ serviceName: 'booking-dispatcher' });
