import type { Config } from '@booking/config';
import { createPgPool, createPrismaClient } from '@booking/db';
import { startScheduledJobs } from '@booking/jobs';
import { serveMetrics, watchPgPool, watchRedis } from '@booking/metrics';
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import type { Logger } from 'pino';
import { MAINTENANCE_LOCK_MS, MAINTENANCE_QUEUE, maintenanceJobs } from './maintenance/maintenance-jobs';
import { EndpointPlaces } from './delivery/endpoint-places';
import { ReceiverAgents } from './delivery/receiver-agents';
import { createMetrics } from './metrics';
import { lateCommitFor, startOutboxRelay } from './relay/outbox-relay';
import { createAttemptRecorder } from './worker/attempt-recorder';
import { EndpointSecrets } from './worker/endpoint-secrets';
import { createPutOffWriter } from './worker/put-off';
import { createDeliveryReader } from './worker/read-delivery';
import { startDeliveryWorker } from './worker/delivery-worker';

/** Connections of the Prisma client, besides the DB_POOL_SIZE of the raw pool. */
const PRISMA_POOL_SIZE = 2;

export interface Dispatcher {
  stop(): Promise<void>;
}

/**
 * The webhook dispatcher: the outbox relay, a delivery worker, the maintenance jobs (the sweeper)
 * and the metrics endpoint. Several dispatchers may run against one database and Redis; they
 * share the work.
 */
export async function startDispatcher(
  config: Config,
  logger: Logger,
  options: { metrics?: boolean } = {},
): Promise<Dispatcher> {
  // Prisma serves what is not per delivery (the sweeper, a deleted or disabled endpoint's
  // deliveries); the relay and the attempts run as prepared statements on a raw pg pool
  // (createPgPool: the same bounds), since Prisma's runtime was most of a delivery's CPU.
  const db = createPrismaClient(config.databaseUrl, { poolSize: PRISMA_POOL_SIZE, ...config.dbTimeouts });
  const connection = queueConnection(config);
  connection.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  const queue = createDeliveryQueue(connection, config.queuePrefix);
  const places = new EndpointPlaces(config.webhooks.endpointConcurrency);
  const metrics = createMetrics(queue, places);
  const sql = createPgPool(config.databaseUrl, { poolSize: config.dbPoolSize, ...config.dbTimeouts });
  sql.on('error', (error) => logger.warn({ err: error }, 'postgresql connection error'));
  watchPgPool(metrics.registry, sql);
  watchRedis(metrics.registry, { queue: connection });
  const recorder = createAttemptRecorder(sql, {
    retryDelaysMs: config.webhooks.retryDelaysMs,
    autoDisableAfter: config.webhooks.autoDisableAfter,
  });
  const agents = new ReceiverAgents();
  const reader = createDeliveryReader(sql);
  const putOff = createPutOffWriter(sql);
  const secrets = new EndpointSecrets(config.webhooks.secretKey);
  const deliveries = startDeliveryWorker(
    { db, reader, recorder, putOff, agents, places, secrets, config, logger, metrics },
    connection,
    queue,
  );
  const stopRelay = startOutboxRelay({
    sql,
    queue,
    retryDelaysMs: config.webhooks.retryDelaysMs,
    intervalMs: config.webhooks.relayIntervalMs,
    logger,
    lateCommitMs: lateCommitFor(Math.max(config.dbTimeouts.transactionTimeoutMs, config.dbTimeouts.statementTimeoutMs)),
  });
  const maintenance = await startScheduledJobs({
    connection,
    prefix: config.queuePrefix,
    queueName: MAINTENANCE_QUEUE,
    jobs: maintenanceJobs({ db, queue, config }),
    logger,
    lockDurationMs: MAINTENANCE_LOCK_MS,
    metrics: metrics.registry,
  });
  const server =
    options.metrics === false
      ? null
      : serveMetrics(metrics.registry, { port: config.metricsPort, logger, portSetting: 'METRICS_PORT' });
  logger.info(
    {
      concurrency: config.webhooks.concurrency,
      endpointConcurrency: config.webhooks.endpointConcurrency,
      metricsPort: server ? config.metricsPort : null,
    },
    'dispatcher started',
  );

  return {
    async stop() {
      await stopRelay();
      // Lets in-flight attempts and a running sweep finish; unfinished jobs go back to the queue.
      // The worker (and any it replaced as wedged) stops taking jobs first; then those waiting for
      // an endpoint's place go back at once rather than after the endpoint's requests ahead of them.
      const workerClosed = deliveries.close(config.shutdownGraceMs);
      places.close();
      await Promise.all([workerClosed, maintenance.close(config.shutdownGraceMs)]);
      await Promise.all([reader.close(), recorder.close(), putOff.close()]);
      agents.destroy();
      await queue.close();
      server?.close();
      await Promise.allSettled([db.$disconnect(), sql.end(), connection.quit()]);
    },
  };
}
