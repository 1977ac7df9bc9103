import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import type { ScheduledJob } from '@booking/jobs';
import type { DeliveryQueue } from '@booking/webhook-queue';
import { sweepUnqueued } from './sweep-unqueued';

/** The BullMQ queue of the dispatchers' maintenance jobs, under `QUEUE_PREFIX`. */
export const MAINTENANCE_QUEUE = 'dispatcher-maintenance';

/**
 * A maintenance run holds its job this long without renewing the lock: a sweep takes well under a
 * second, and a dispatcher killed mid-sweep holds up the next sweeps for a lock and a half at most.
 */
export const MAINTENANCE_LOCK_MS = 10_000;

/** Periodic upkeep of webhook delivery, run by every dispatcher process (each tick by one of them). */
export function maintenanceJobs(deps: { db: Db; queue: DeliveryQueue; config: Config }): ScheduledJob[] {
  const { retryDelaysMs, sweepIntervalMs } = deps.config.webhooks;
  return [
    {
      name: 'sweep-unqueued-deliveries',
      schedule: { every: sweepIntervalMs },
      async handler({ logger }) {
        const requeued = await sweepUnqueued(deps.db, deps.queue, retryDelaysMs, sweepIntervalMs * 2);
        if (requeued > 0) logger.warn({ swept: requeued }, 'queued deliveries that had no job');
        return { requeued };
      },
    },
  ];
}
