import { watchRedis } from '@booking/metrics';
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { WorkerDeps } from './worker-deps';

/**
 * What the lifecycle worker exports on WORKER_HEALTH_PORT: Node's default process metrics and
 * the health of its Redis connections here; its jobs' runs and its queue's depth are added by
 * startScheduledJobs, which is given this registry.
 */
export function createWorkerMetrics(deps: Pick<WorkerDeps, 'redis' | 'queueRedis'>): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  watchRedis(registry, { commands: deps.redis, queue: deps.queueRedis });
  return registry;
}
