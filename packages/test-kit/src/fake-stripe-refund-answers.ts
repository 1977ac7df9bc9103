// What the fake Stripe's refunds say when they are made: Stripe answers most card refunds
// `succeeded` at once, but some stay `pending` for days and some end `failed` (a closed card) or
// `canceled`.

export type FakeRefundStatus = 'succeeded' | 'pending' | 'failed' | 'canceled';

/** The statuses the next refunds are made with, in order; `succeeded` once none is queued. */
export function refundAnswers() {
  const queued: FakeRefundStatus[] = [];
  return {
    queue(...statuses: FakeRefundStatus[]) {
      queued.push(...statuses);
    },
    next(): FakeRefundStatus {
      return queued.shift() ?? 'succeeded';
    },
  };
}

/** A failed or canceled refund gave nothing back: its payment can be refunded again, as at Stripe. */
export const givesBack = (refund: { status: FakeRefundStatus }): boolean =>
  refund.status !== 'failed' && refund.status !== 'canceled';
