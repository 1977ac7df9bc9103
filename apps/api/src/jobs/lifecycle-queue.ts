/** The BullMQ queue of the API's lifecycle jobs, under `QUEUE_PREFIX`. */
export const LIFECYCLE_QUEUE = 'lifecycle-jobs';

/**
 * Names of the lifecycle jobs the API also asks to run at an exact moment (jobRunsAt), beside
 * their periodic ticks: one home, shared by the job list and the producers.
 */
export const LIFECYCLE_JOB = {
  cancelUnpaidOrders: 'cancel-unpaid-orders',
  startFreezes: 'start-freezes',
  endFreezes: 'end-freezes',
} as const;
