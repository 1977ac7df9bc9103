import type { Tx } from '@booking/db';
import { claimLock } from './lock-order';

export interface LockedRefund {
  id: string;
  paymentId: string;
  amountCents: number;
  reason: string | null;
  status: 'pending' | 'succeeded' | 'failed';
  keepBookingActive: boolean;
  /** Made by the service itself (refund-for-review), not by an operator or in Stripe's dashboard. */
  automatic: boolean;
}

/** Locks a refund row; the caller holds its booking's lock. */
export async function lockRefund(tx: Tx, refundId: string): Promise<LockedRefund | undefined> {
  claimLock(tx, 'refund', refundId);
  const [row] = await tx.$queryRaw<
    {
      id: string;
      payment_id: string;
      amount_cents: number;
      reason: string | null;
      status: LockedRefund['status'];
      keep_booking_active: boolean;
      automatic: boolean;
    }[]
  >`
    SELECT id, payment_id, amount_cents, reason, status::text AS status, keep_booking_active, automatic
    FROM refunds WHERE id = ${refundId}::uuid FOR UPDATE`;
  return (
    row && {
      id: row.id,
      paymentId: row.payment_id,
      amountCents: row.amount_cents,
      reason: row.reason,
      status: row.status,
      keepBookingActive: row.keep_booking_active,
      automatic: row.automatic,
    }
  );
}
