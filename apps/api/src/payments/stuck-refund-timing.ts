/**
 * The timing of the jobs that settle refunds Stripe never answered about
 * (settle-stuck-booking-refunds, settle-stuck-order-refunds): one home for both.
 */

/**
 * How long a refund may go without Stripe's answer before a job asks Stripe about it, and again
 * after that: well past a request's own call with the SDK's retries. A run claims its refunds for
 * this long (updated_at), so no other pod's run takes them meanwhile.
 */
export const STUCK_REFUND_MS = 5 * 60 * 1000;

/**
 * How long a refund Stripe answered pending waits for its notification before a job asks Stripe
 * about it, and again after that while Stripe still has it pending: a lost notification is rare,
 * and such a refund is only ever looked up, never sent again.
 */
export const UNSETTLED_REFUND_MS = 24 * 60 * 60 * 1000;

/** How long a run works through what it claimed: short of its claim running out (STUCK_REFUND_MS). */
const CLAIM_WORK_MS = 4 * 60 * 1000;

/**
 * How long after a refund was made a job may send it again unattended: while Stripe still applies
 * its idempotency key. Stripe keeps a key 24 hours from its first use, never earlier than the
 * refund was made; an hour short of that covers clocks and a run's length. Sent later, the same
 * request would be a new refund, and an amount an operator has given back another way meanwhile
 * (a dashboard refund without our metadata, cash) would be paid twice. Older refunds are only
 * looked up; sending one again is an operator's deliberate call.
 */
export const RESEND_WITHIN_MS = 23 * 60 * 60 * 1000;

/** Whether Stripe's key still protects sending again a refund made at `createdAt` (RESEND_WITHIN_MS). */
export function keyStillProtects(createdAt: Date, now: Date): boolean {
  return now.getTime() - createdAt.getTime() < RESEND_WITHIN_MS;
}

/**
 * Whether a run that claimed its refunds at `claimedAt` goes on to the next one: not once its
 * claims are about to run out (another pod's run may take them then), nor once the worker is
 * shutting down (`signal`). The rest come up again when their claim has run out.
 */
export function mayGoOn(claimedAt: Date, signal?: AbortSignal): boolean {
  return !signal?.aborted && Date.now() - claimedAt.getTime() < CLAIM_WORK_MS;
}
