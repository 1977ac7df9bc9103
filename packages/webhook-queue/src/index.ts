import { Queue, type ConnectionOptions } from 'bullmq';
import { createRedis, type RedisClient, type RedisTarget } from '@booking/db';

/** The BullMQ queue of webhook deliveries: the API and the relay add, dispatcher workers take. */
export const DELIVERY_QUEUE = 'webhook-deliveries';

/** A job names its delivery and nothing else: the worker reads the rest from PostgreSQL. */
export interface DeliveryJobData {
  deliveryId: string;
  /** Index in the retry schedule of this job's first attempt (non-zero when a schedule resumes). */
  firstAttempt: number;
}

export type DeliveryQueue = Queue<DeliveryJobData>;

export interface DeliveryQueueOptions {
  /**
   * For a queue that request handlers add to (on a fail-fast connection such as @booking/db's `createRedis`): its commands do not
   * wait for Redis to be ready, which BullMQ would otherwise wait for as long as Redis refuses
   * connections. It also skips BullMQ's Redis version check, whose failure at start-up would break
   * the queue for good; the dispatcher's queue still checks. Default false.
   */
  failFast?: boolean;
}

/** `prefix` namespaces the queue's Redis keys, so deployments (or test runs) sharing a Redis stay apart. */
export function createDeliveryQueue(
  connection: ConnectionOptions,
  prefix: string,
  options: DeliveryQueueOptions = {},
): DeliveryQueue {
  const failFast = options.failFast ?? false;
  return new Queue<DeliveryJobData>(DELIVERY_QUEUE, {
    connection,
    prefix,
    skipWaitingForReady: failFast,
    skipVersionCheck: failFast,
  });
}

/**
 * Queues deliveries. The job id is the delivery id, so a delivery is queued at most once at a
 * time however many processes try (the relay, its sweeper, an operator's redeliver). Finished
 * jobs are removed: PostgreSQL keeps the history, and a later redelivery can reuse the id.
 * Attempt 1 waits `retryDelaysMs[firstAttempt]`; after a failed attempt the worker moves the
 * same job back to delayed for the schedule's next step. BullMQ's own `attempts` and backoff
 * (see `unexpectedFailureDelay`) only space out runs that threw unexpectedly.
 */
export async function enqueueDeliveries(
  queue: DeliveryQueue,
  deliveries: { id: string; firstAttempt?: number; delayMs?: number }[],
  retryDelaysMs: number[],
): Promise<void> {
  if (deliveries.length === 0) return;
  await queue.addBulk(
    deliveries.map(({ id, firstAttempt = 0, delayMs }) => ({
      name: 'deliver',
      data: { deliveryId: id, firstAttempt },
      opts: {
        jobId: id,
        delay: delayMs ?? retryDelaysMs[firstAttempt] ?? 0,
        attempts: UNEXPECTED_FAILURE_RUNS,
        backoff: { type: 'capped' },
        removeOnComplete: true,
        removeOnFail: true,
      },
    })),
  );
}

/**
 * Runs of a job that may throw unexpectedly (PostgreSQL away, say) before BullMQ drops it: with
 * the backoff below, about a quarter of an hour. A dropped job's delivery stays pending in
 * PostgreSQL, and the sweeper queues it again once it is overdue.
 */
export const UNEXPECTED_FAILURE_RUNS = 20;

/**
 * The wait after the `failedRuns`-th run of a job that threw: 1 s, doubling, at most a minute, so
 * deliveries resume within a minute of the database coming back. Never the delivery schedule,
 * whose later steps (hours) would hold a delivery that never got to its receiver long after
 * the outage; failed attempts reschedule themselves by that schedule (see the worker).
 */
export function unexpectedFailureDelay(failedRuns: number): number {
  return Math.min(1_000 * 2 ** Math.max(0, failedRuns - 1), 60_000);
}

/**
 * A Redis connection for BullMQ workers, which need `maxRetriesPerRequest: null` and no command
 * timeout so their blocking commands wait for jobs, and for Redis to come back, instead of failing.
 * A cluster when the target says so (REDIS_CLUSTER_NODES).
 */
export function queueConnection(target: RedisTarget): RedisClient {
  return createRedis(target, { maxRetriesPerRequest: null, commandTimeoutMs: null, lazyConnect: false });
}
