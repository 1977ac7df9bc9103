import type { PgPool, RedisClient } from '@booking/db';
import { watchPgPool, watchRedis } from '@booking/metrics';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { countersRegistry } from '../http/counters';
import { watchOutboxLag } from './outbox-lag';

/**
 * Everything the API process exports on API_METRICS_PORT: its counters and request histogram,
 * the outbox lag, the health of its PostgreSQL pool and Redis connections, and Node's default
 * process metrics. Made once per process (main.ts), or per test.
 */
export function createApiMetrics(deps: { pool: PgPool; redis: RedisClient; queueRedis: RedisClient }): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  watchPgPool(registry, deps.pool);
  watchRedis(registry, { commands: deps.redis, queue: deps.queueRedis });
  watchOutboxLag(registry, deps.pool);
  return Registry.merge([countersRegistry, registry]);
}
