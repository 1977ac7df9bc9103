/**
 * @booking/metrics: what every process's Prometheus metrics share. Each process (API, dispatcher,
 * lifecycle worker) keeps its own prom-client Registry and serves it with `serveMetrics` on a
 * port of its own, never on the public API port behind the load balancer. The catalogue of
 * metrics and what to alert on is docs/metrics.md.
 */
export { serveMetrics } from './metrics-server';
export { watchPgPool } from './pg-pool-health';
export { readWithin } from './read-within';
export { watchRedis } from './redis-health';
