// First: instrumentation must be in place before the modules it traces load.
import { tracing } from './worker-tracing';
import { ConfigError, loadConfig } from '@booking/config';
import { startScheduledJobs } from '@booking/jobs';
import { serveMetrics } from '@booking/metrics';
import { LIFECYCLE_QUEUE, lifecycleJobs } from './lifecycle-jobs';
import { closeWorkerDeps, createWorkerDeps } from './worker-deps';
import { createWorkerMetrics } from './worker-metrics';

/**
 * The lifecycle worker process (`pnpm start:worker`): runs the API's scheduled jobs. Any number
 * may run; each tick is run by one of them.
 */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error(error instanceof ConfigError ? error.message : error);
    process.exit(1);
  }
  const deps = createWorkerDeps(config);
  const metrics = createWorkerMetrics(deps);
  const jobs = await startScheduledJobs({
    connection: deps.queueRedis,
    prefix: config.queuePrefix,
    queueName: LIFECYCLE_QUEUE,
    jobs: lifecycleJobs(deps),
    logger: deps.logger,
    metrics,
  });
  // /healthz answers once the schedulers are registered; /metrics beside it.
  const health = serveMetrics(metrics, {
    port: config.workerHealthPort,
    logger: deps.logger,
    portSetting: 'WORKER_HEALTH_PORT',
  });
  deps.logger.info({ healthPort: config.workerHealthPort }, 'lifecycle worker started');

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    deps.logger.info({ signal }, 'lifecycle worker shutting down');
    const force = setTimeout(() => process.exit(1), config.shutdownGraceMs).unref();
    // Running jobs get most of the grace; closing the connections after them takes a moment.
    jobs
      .close(config.shutdownGraceMs * 0.8)
      .then(() => {
        health.close();
        return closeWorkerDeps(deps);
      })
      // Spans of the last runs are exported last.
      .then(() => tracing.shutdown())
      .then(() => {
        deps.logger.info('lifecycle worker stopped');
        clearTimeout(force);
        process.exit(0);
      })
      .catch((error: unknown) => {
        deps.logger.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
