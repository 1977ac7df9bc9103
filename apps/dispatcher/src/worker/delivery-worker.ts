import { DELIVERY_QUEUE, retryDelay, type DeliveryJobData } from '@booking/webhook-queue';
import { Worker, type ConnectionOptions } from 'bullmq';
import { deliver, type DeliverDeps } from './deliver';

/**
 * A BullMQ worker that delivers webhooks. Any number of these may run, in one process or many:
 * a job is held by one worker at a time under a lock that outlives the request timeout, so a slow
 * receiver never has two attempts of one delivery in flight.
 */
export function startDeliveryWorker(deps: DeliverDeps, connection: ConnectionOptions): Worker<DeliveryJobData> {
  const delays = deps.config.webhooks.retryDelaysMs;
  const worker = new Worker<DeliveryJobData>(DELIVERY_QUEUE, (job) => deliver(deps, job), {
    connection,
    prefix: deps.config.queuePrefix,
    concurrency: deps.config.webhooks.concurrency,
    lockDuration: Math.max(30_000, deps.config.webhooks.timeoutMs * 3),
    settings: {
      // Called after BullMQ counted the failure: attemptsMade includes the attempt that just failed.
      backoffStrategy: (attemptsMade, _type, _error, job) =>
        retryDelay(delays, (job?.data as DeliveryJobData | undefined)?.firstAttempt ?? 0, attemptsMade),
    },
  });
  worker.on('failed', (job, error) => {
    if (error.name !== 'AttemptFailed') {
      deps.logger.error({ err: error, deliveryId: job?.data.deliveryId }, 'delivery job failed');
    }
  });
  worker.on('error', (error) => deps.logger.error({ err: error }, 'delivery worker error'));
  return worker;
}
