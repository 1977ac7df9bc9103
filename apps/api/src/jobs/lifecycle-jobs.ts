import type { ScheduledJob } from '@booking/jobs';
import { expireHeldBookings } from '../bookings/expire-held-bookings';
import { cancelUnpaidOrders } from '../online-orders/cancel-unpaid-orders';
import { settleStuckOrderRefunds } from '../orders/settle-stuck-order-refunds';
import { settleStuckBookingRefunds } from '../refunds/settle-stuck-booking-refunds';
import { endFreezes } from '../membership-freezes/end-freezes';
import { expireMemberships } from '../membership-freezes/expire-memberships';
import { startFreezes } from '../membership-freezes/start-freezes';
import { applyPriceChanges } from '../membership-changes/apply-price-changes';
import { endUnpaidMemberships } from '../membership-billing/end-unpaid-memberships';
import { reconcileMemberships } from '../membership-billing/reconcile-memberships';
import { voidAbandonedOrders } from '../pos-orders/void-abandoned-orders';
import { expireWalletFunds } from '../wallets/expire-wallet-funds';
import { LIFECYCLE_JOB } from './lifecycle-queue';
import type { WorkerDeps } from './worker-deps';

export { LIFECYCLE_QUEUE } from './lifecycle-queue';

/**
 * The API's periodic work, run by the lifecycle worker (worker-main.ts). Each job calls a
 * feature's use case, which must be safe to run twice (see @booking/jobs).
 */
export function lifecycleJobs(deps: WorkerDeps): ScheduledJob[] {
  return [
    {
      name: 'expire-unpaid-bookings',
      schedule: { every: deps.config.unpaidBookingSweepSeconds * 1000 },
      handler: ({ signal }) =>
        untilDone(signal, 'cancelled', () => expireHeldBookings(deps, deps.config.unpaidBookingExpirySeconds)),
    },
    {
      name: 'settle-stuck-booking-refunds',
      schedule: { every: deps.config.unpaidBookingSweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'settled', () => settleStuckBookingRefunds({ ...deps, signal })),
    },
    {
      name: LIFECYCLE_JOB.cancelUnpaidOrders,
      schedule: { every: deps.config.orders.sweepSeconds * 1000 },
      // Not untilDone: a batch the provider would not let go of cancels nothing, yet the orders
      // behind it are due. The run pages through them itself, a bounded number of batches.
      handler: async ({ signal }) => ({ cancelled: await cancelUnpaidOrders({ ...deps, signal }) }),
    },
    {
      name: 'settle-stuck-order-refunds',
      schedule: { every: deps.config.orders.sweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'settled', () => settleStuckOrderRefunds({ ...deps, signal })),
    },
    {
      name: 'void-abandoned-orders',
      schedule: { every: deps.config.orders.sweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'voided', () => voidAbandonedOrders(deps)),
    },
    {
      name: 'expire-wallet-funds',
      schedule: { every: deps.config.wallets.expirySweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'expired', () => expireWalletFunds(deps)),
    },
    {
      name: LIFECYCLE_JOB.startFreezes,
      schedule: { every: deps.config.memberships.sweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'started', () => startFreezes(deps)),
    },
    {
      name: LIFECYCLE_JOB.endFreezes,
      schedule: { every: deps.config.memberships.sweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'ended', () => endFreezes(deps)),
    },
    {
      name: 'expire-memberships',
      schedule: { every: deps.config.memberships.sweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'expired', () => expireMemberships(deps)),
    },
    {
      name: 'apply-price-changes',
      schedule: { every: deps.config.memberships.sweepSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'applied', () => applyPriceChanges(deps)),
    },
    {
      name: 'end-unpaid-memberships',
      schedule: { every: deps.config.memberships.reconcileSeconds * 1000 },
      // Counted: memberships ended, or failed and left out until later.
      handler: ({ signal }) => untilDone(signal, 'tried', (startedAt) => endUnpaidMemberships(deps, startedAt)),
    },
    {
      name: 'reconcile-memberships',
      schedule: { every: deps.config.memberships.reconcileSeconds * 1000 },
      handler: ({ signal }) => untilDone(signal, 'read', (startedAt) => reconcileMemberships(deps, startedAt)),
    },
  ];
}

/**
 * Runs batch after batch until one changes nothing, so a backlog clears in one tick; a shutdown
 * stops it between batches. Each batch returns how many rows it changed; the total is logged as
 * `counted`. Every batch gets the run's start as its clock: a job that backs off from rows it
 * failed on (the membership jobs) then never finds them due again in the same run, so the run
 * ends however long each failure took.
 */
async function untilDone(
  signal: AbortSignal,
  counted: string,
  batch: (startedAt: Date) => Promise<number>,
): Promise<Record<string, number>> {
  const startedAt = new Date();
  let changed = 0;
  let last: number;
  do {
    last = await batch(startedAt);
    changed += last;
  } while (last > 0 && !signal.aborted);
  return { [counted]: changed };
}
