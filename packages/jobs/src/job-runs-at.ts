import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { KEEP_COMPLETED, KEEP_FAILED } from './reconcile-schedulers';

/**
 * Exact-time runs of scheduled jobs: a delayed BullMQ job named like a scheduled job runs that
 * job's handler when its time comes, in whichever worker takes it. Producers (the API) use it so
 * work due at a known moment (an order's payment window closing, a freeze's first day) happens
 * then rather than at the next tick; the periodic tick stays the safety net for a run Redis lost.
 */
export interface JobRunsAt {
  /**
   * Runs job `name` at `at` (at once when it is past). `key` names the row and moment it is for,
   * so asking twice queues one run: the job id is `<name>-<key>` (BullMQ ids take no `:`).
   */
  runAt(name: string, at: Date, key: string): Promise<void>;
  close(): Promise<void>;
}

export function jobRunsAt(options: { connection: Redis | Cluster; prefix: string; queueName: string }): JobRunsAt {
  const queue = new Queue(options.queueName, { connection: options.connection, prefix: options.prefix });
  return {
    async runAt(name, at, key) {
      if (key.includes(':')) throw new Error(`a job run key may not contain ':' (${key})`);
      // The delay counts from the job's timestamp: both from one clock reading, so it is due at `at` exactly.
      const now = Date.now();
      await queue.add(
        name,
        {},
        {
          jobId: `${name}-${key}`,
          timestamp: now,
          delay: Math.max(0, at.getTime() - now),
          attempts: 3,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: KEEP_COMPLETED,
          removeOnFail: KEEP_FAILED,
        },
      );
    },
    close: () => queue.close(),
  };
}
