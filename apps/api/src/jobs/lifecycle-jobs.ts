import type { ScheduledJob } from '@booking/jobs';
import { expireHeldBookings } from '../bookings/expire-held-bookings';
import type { WorkerDeps } from './worker-deps';

/** The BullMQ queue of the API's lifecycle jobs, under `QUEUE_PREFIX`. */
export const LIFECYCLE_QUEUE = 'lifecycle-jobs';

/**
 * The API's periodic work, run by the lifecycle worker (worker-main.ts). Each job calls a
 * feature's use case, which must be safe to run twice (see @booking/jobs).
 */
export function lifecycleJobs(deps: WorkerDeps): ScheduledJob[] {
  return [
    {
      name: 'expire-unpaid-bookings',
      schedule: { every: deps.config.unpaidBookingSweepSeconds * 1000 },
      // Batch after batch until none is left, so a backlog clears in one tick; a shutdown stops
      // it between batches.
      async handler({ signal }) {
        let cancelled = 0;
        let batch: number;
        do {
          batch = await expireHeldBookings(deps, deps.config.unpaidBookingExpirySeconds);
          cancelled += batch;
        } while (batch > 0 && !signal.aborted);
        return { cancelled };
      },
    },
  ];
}
