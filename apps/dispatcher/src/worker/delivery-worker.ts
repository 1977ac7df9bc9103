import { selfHealingWorker, type CountRun, type SelfHealingWorker } from '@booking/jobs';
import {
  DELIVERY_QUEUE,
  unexpectedFailureDelay,
  type DeliveryJobData,
  type DeliveryQueue,
} from '@booking/webhook-queue';
import { Worker, type ConnectionOptions } from 'bullmq';
import { deliver, type DeliverDeps } from './deliver';

/**
 * The shortest job lock whatever the request timeout: room for the database work around the
 * request, and for a busy event loop (a live worker renews the lock every half of it).
 */
const MIN_LOCK_MS = 10_000;

/**
 * How long a worker's hold on a job lasts without renewal: three request timeouts (30 s with the
 * default 10 s timeout), never less than 10 s, so it always outlives an attempt and only a dead
 * (or frozen) worker loses it. The stalled-job check runs every half lock (BullMQ's default is a
 * fixed 30 s) and hands such a job to another worker, which sends it again with the same delivery
 * id: a killed dispatcher's deliveries resume within a lock and a half of its death, 15 s with a
 * 3 s timeout (the crash test counts on it), 45 s with the default.
 */
export function jobLockMs(timeoutMs: number): { lockDuration: number; stalledInterval: number } {
  const lockDuration = Math.max(MIN_LOCK_MS, timeoutMs * 3);
  return { lockDuration, stalledInterval: Math.ceil(lockDuration / 2) };
}

/**
 * A BullMQ worker that delivers webhooks. Any number of these may run, in one process or many:
 * a job is held by one worker at a time under a lock that outlives the request timeout, so a slow
 * receiver never has two attempts of one delivery in flight. A worker that stops taking jobs
 * while it has free slots (its blocking connection wedged by a Redis Cluster failover) is
 * replaced by a new one (see selfHealingWorker).
 */
export function startDeliveryWorker(
  deps: DeliverDeps,
  connection: ConnectionOptions,
  queue: DeliveryQueue,
): SelfHealingWorker<DeliveryJobData> {
  const { concurrency } = deps.config.webhooks;
  const start = (countRun: CountRun) => {
    const worker = new Worker<DeliveryJobData>(
      DELIVERY_QUEUE,
      (job, token) => countRun(job, token, () => deliver(deps, job, token)),
      {
        connection,
        prefix: deps.config.queuePrefix,
        concurrency,
        ...jobLockMs(deps.config.webhooks.timeoutMs),
        settings: {
          // Failed attempts reschedule themselves (see deliver). This backoff only spaces out runs
          // that threw unexpectedly (the database away), after BullMQ counted them.
          backoffStrategy: (attemptsMade) => unexpectedFailureDelay(attemptsMade),
        },
      },
    );
    worker.on('failed', (job, error) => {
      deps.logger.error({ err: error, deliveryId: job?.data.deliveryId }, 'delivery job failed');
    });
    worker.on('error', (error) => deps.logger.error({ err: error }, 'delivery worker error'));
    return worker;
  };
  return selfHealingWorker({
    queue,
    start,
    concurrency,
    logger: deps.logger,
    what: 'delivery worker',
  });
}
