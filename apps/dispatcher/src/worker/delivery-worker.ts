import { DELIVERY_QUEUE, unexpectedFailureDelay, type DeliveryJobData } from '@booking/webhook-queue';
import { Worker, type ConnectionOptions } from 'bullmq';
import { deliver, type DeliverDeps } from './deliver';
import { jobLockMs } from './job-lock';

/**
 * A BullMQ worker that delivers webhooks. Any number of these may run, in one process or many:
 * a job is held by one worker at a time under a lock that outlives the request timeout, so a slow
 * receiver never has two attempts of one delivery in flight.
 */
export function startDeliveryWorker(deps: DeliverDeps, connection: ConnectionOptions): Worker<DeliveryJobData> {
  const worker = new Worker<DeliveryJobData>(DELIVERY_QUEUE, (job, token) => deliver(deps, job, token), {
    connection,
    prefix: deps.config.queuePrefix,
    concurrency: deps.config.webhooks.concurrency,
    ...jobLockMs(deps.config.webhooks.timeoutMs),
    settings: {
      // Failed attempts reschedule themselves (see deliver). This backoff only spaces out runs
      // that threw unexpectedly (the database away), after BullMQ counted them.
      backoffStrategy: (attemptsMade) => unexpectedFailureDelay(attemptsMade),
    },
  });
  worker.on('failed', (job, error) => {
    deps.logger.error({ err: error, deliveryId: job?.data.deliveryId }, 'delivery job failed');
  });
  worker.on('error', (error) => deps.logger.error({ err: error }, 'delivery worker error'));
  return worker;
}
