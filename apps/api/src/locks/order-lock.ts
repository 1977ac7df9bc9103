import type { OrderChannel, OrderKind, OrderStatus, Tx } from '@booking/db';
import { claimLock } from './lock-order';
import { scopedTenant, type TenantScope } from './tenant-scope';

export interface LockedOrder {
  id: string;
  tenantId: string;
  channel: OrderChannel;
  kind: OrderKind;
  status: OrderStatus;
  customerId: string | null;
  walletId: string | null;
  /** The membership a membership order sells, or whose discount a till order used. */
  membershipId: string | null;
  shiftId: string | null;
  venueId: string | null;
  currency: string;
  totalCents: number;
  paidCents: number;
  refundedCents: number;
  paymentIntentId: string | null;
  payBy: Date | null;
  reviewReason: string | null;
}

type Row = {
  id: string;
  tenant_id: string;
  channel: OrderChannel;
  kind: OrderKind;
  status: OrderStatus;
  customer_id: string | null;
  wallet_id: string | null;
  membership_id: string | null;
  shift_id: string | null;
  venue_id: string | null;
  currency: string;
  total_cents: number;
  paid_cents: number;
  refunded_cents: number;
  payment_intent_id: string | null;
  pay_by: Date | null;
  review_reason: string | null;
};

function toLocked(row: Row): LockedOrder {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    channel: row.channel,
    kind: row.kind,
    status: row.status,
    customerId: row.customer_id,
    walletId: row.wallet_id,
    membershipId: row.membership_id,
    shiftId: row.shift_id,
    venueId: row.venue_id,
    currency: row.currency,
    totalCents: row.total_cents,
    paidCents: row.paid_cents,
    refundedCents: row.refunded_cents,
    paymentIntentId: row.payment_intent_id,
    payBy: row.pay_by && new Date(row.pay_by),
    reviewReason: row.review_reason,
  };
}

/**
 * Locks an order: every change to it (a tender, settling, voiding, a payment, a refund) starts
 * here, so two tills or a till and a job acting on one order queue and one of them wins.
 */
export async function lockOrder(tx: Tx, scope: TenantScope, orderId: string): Promise<LockedOrder | undefined> {
  claimLock(tx, 'order', orderId);
  const tenantId = scopedTenant(scope);
  const [row] = await tx.$queryRaw<Row[]>`
    SELECT id, tenant_id, channel, kind, status, customer_id, wallet_id, membership_id, shift_id, venue_id, currency,
           total_cents, paid_cents, refunded_cents, payment_intent_id, pay_by, review_reason
    FROM orders
    WHERE id = ${orderId}::uuid AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
    FOR UPDATE`;
  return row && toLocked(row);
}

/**
 * Locks an order unless another transaction holds it (SKIP LOCKED): for jobs, which leave a busy
 * order to whoever holds it and to their next run.
 */
export async function lockOrderUnlessBusy(tx: Tx, orderId: string): Promise<LockedOrder | undefined> {
  claimLock(tx, 'order', orderId);
  const [row] = await tx.$queryRaw<Row[]>`
    SELECT id, tenant_id, channel, kind, status, customer_id, wallet_id, membership_id, shift_id, venue_id, currency,
           total_cents, paid_cents, refunded_cents, payment_intent_id, pay_by, review_reason
    FROM orders WHERE id = ${orderId}::uuid
    FOR UPDATE SKIP LOCKED`;
  return row && toLocked(row);
}

/** Locks the online order a provider payment belongs to (the payment names no tenant we trust). */
export async function lockOrderByPaymentIntent(tx: Tx, paymentIntentId: string): Promise<LockedOrder | undefined> {
  claimLock(tx, 'order');
  const [row] = await tx.$queryRaw<Row[]>`
    SELECT id, tenant_id, channel, kind, status, customer_id, wallet_id, membership_id, shift_id, venue_id, currency,
           total_cents, paid_cents, refunded_cents, payment_intent_id, pay_by, review_reason
    FROM orders WHERE payment_intent_id = ${paymentIntentId}
    FOR UPDATE`;
  return row && toLocked(row);
}
