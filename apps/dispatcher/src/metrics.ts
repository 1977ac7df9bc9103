import { readWithin } from '@booking/metrics';
import type { DeliveryQueue } from '@booking/webhook-queue';
import type { EndpointPlaces } from './delivery/endpoint-places';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface DispatcherMetrics {
  registry: Registry;
  deliveries: Counter<'outcome'>;
  attemptSeconds: Histogram<'ok'>;
  steppedAside: Counter;
}

/**
 * Prometheus metrics: deliveries by outcome, attempt latency, and queue depth and the jobs waiting
 * for an endpoint's place read on scrape; the maintenance jobs add theirs (@booking/jobs). Served
 * by @booking/metrics on METRICS_PORT.
 */
export function createMetrics(queue: DeliveryQueue, places: EndpointPlaces): DispatcherMetrics {
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
  const steppedAside = new Counter({
    name: 'webhook_jobs_stepped_aside_total',
    help: "Delivery jobs put back in the queue, no attempt made, because their endpoint's places were busy for too long",
    registers: [registry],
  });
  new Gauge({
    name: 'webhook_queue_jobs',
    help: 'Delivery jobs in the queue by state',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      // The worker's connection waits for Redis while it is away: absent beats a hung scrape.
      const counts = await readWithin(queue.getJobCounts('waiting', 'active', 'delayed', 'failed'), 1_000);
      for (const [state, count] of Object.entries(counts ?? {})) this.set({ state }, count);
    },
  });
  new Gauge({
    name: 'webhook_jobs_waiting_for_endpoint',
    help: 'Delivery jobs of this process waiting for a place of their endpoint (WEBHOOK_ENDPOINT_CONCURRENCY)',
    registers: [registry],
    collect() {
      this.set(places.waitingJobs());
    },
  });
  return { registry, deliveries, attemptSeconds, steppedAside };
}
