import { createServer, type Server } from 'node:http';
import type { DeliveryQueue } from '@booking/webhook-queue';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface DispatcherMetrics {
  registry: Registry;
  deliveries: Counter<'outcome'>;
  attemptSeconds: Histogram<'ok'>;
}

/** Prometheus metrics: deliveries by outcome, attempt latency, and queue depth read on scrape. */
export function createMetrics(queue: DeliveryQueue): DispatcherMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Delivery attempts by outcome: succeeded, failed (will retry), abandoned, waiting (endpoint disabled)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const attemptSeconds = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Time from sending a delivery to its response or failure',
    labelNames: ['ok'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'webhook_queue_jobs',
    help: 'Delivery jobs in the queue by state',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
      for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
    },
  });
  return { registry, deliveries, attemptSeconds };
}

/** GET /metrics for Prometheus and GET /healthz for the orchestrator. */
export function serveMetrics(metrics: DispatcherMetrics, port: number, logger: Logger): Server {
  const server = createServer((req, res) => {
    if (req.url === '/metrics') {
      metrics.registry
        .metrics()
        .then((text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text))
        .catch(() => res.writeHead(500).end());
    } else if (req.url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
    } else {
      res.writeHead(404).end();
    }
  });
  // A taken port (say, a second dispatcher on the host) costs the metrics, not the deliveries.
  server.on('error', (error) => logger.error({ err: error, port }, 'metrics server not listening; set METRICS_PORT'));
  return server.listen(port);
}
