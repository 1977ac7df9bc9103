import type { Tx } from '@booking/db';
import { claimLock } from './lock-order';

export interface LockedPayment {
  id: string;
  method: 'card' | 'cash' | 'gift_card';
  status: 'succeeded' | 'refunded';
  amountCents: number;
  refundedCents: number;
  providerReference: string | null;
  /** Could not be kept: refunded automatically (see handle-payment-succeeded). */
  refundDue: boolean;
  /** Did not cover what its booking owed: it never paid for the booking (payment-covers-booking). */
  mismatched: boolean;
}

interface PaymentRow {
  id: string;
  method: LockedPayment['method'];
  status: LockedPayment['status'];
  amount_cents: number;
  refunded_cents: number;
  provider_reference: string | null;
  refund_due: boolean;
  mismatched: boolean;
}

const paymentOf = (row: PaymentRow): LockedPayment => ({
  id: row.id,
  method: row.method,
  status: row.status,
  amountCents: row.amount_cents,
  refundedCents: row.refunded_cents,
  providerReference: row.provider_reference,
  refundDue: row.refund_due,
  mismatched: row.mismatched,
});

/**
 * Locks a booking's succeeded payments (all methods) that paid for it, in id order: a mismatched
 * card payment never did, and its money is not the booking's to reissue.
 */
export async function lockSucceededPayments(tx: Tx, bookingId: string): Promise<LockedPayment[]> {
  claimLock(tx, 'payment');
  const rows = await tx.$queryRaw<PaymentRow[]>`
    SELECT id, method::text AS method, status::text AS status, amount_cents, refunded_cents, provider_reference,
           refund_due, mismatched
    FROM payments WHERE booking_id = ${bookingId}::uuid AND status = 'succeeded' AND NOT mismatched
    ORDER BY id FOR UPDATE`;
  return rows.map(paymentOf);
}

/**
 * Locks the booking's card payment made through the provider that a refund gives back from: the
 * first that paid for it. A mismatched one only when there is no other: with another, its money
 * (its automatic refund failed) is given back in Stripe's dashboard, whose notification is
 * recorded against it; a refund asked of the booking never turns into one of a payment in
 * another currency or of another amount.
 */
export async function lockCardPayment(tx: Tx, bookingId: string): Promise<LockedPayment | undefined> {
  claimLock(tx, 'payment');
  const [row] = await tx.$queryRaw<PaymentRow[]>`
    SELECT id, method::text AS method, status::text AS status, amount_cents, refunded_cents, provider_reference,
           refund_due, mismatched
    FROM payments
    WHERE booking_id = ${bookingId}::uuid AND method = 'card' AND provider_reference IS NOT NULL
    ORDER BY mismatched, created_at LIMIT 1 FOR UPDATE`;
  return row && paymentOf(row);
}

/** Locks the payment a provider object (PaymentIntent) made. */
export async function lockPaymentByReference(tx: Tx, providerReference: string): Promise<LockedPayment | undefined> {
  claimLock(tx, 'payment');
  const [row] = await tx.$queryRaw<PaymentRow[]>`
    SELECT id, method::text AS method, status::text AS status, amount_cents, refunded_cents, provider_reference,
           refund_due, mismatched
    FROM payments WHERE provider_reference = ${providerReference} FOR UPDATE`;
  return row && paymentOf(row);
}

/**
 * Locks the booking's gift card payments that still hold money, in id order, with the card
 * each came from.
 */
export async function lockGiftCardPayments(
  tx: Tx,
  bookingId: string,
): Promise<{ id: string; unreturnedCents: number; giftCardId: string }[]> {
  claimLock(tx, 'payment');
  const rows = await tx.$queryRaw<{ id: string; unreturned: number; gift_card_id: string }[]>`
    SELECT p.id, p.amount_cents - p.refunded_cents AS unreturned, b.gift_card_id
    FROM payments p JOIN bookings b ON b.id = p.booking_id
    WHERE p.booking_id = ${bookingId}::uuid AND p.method = 'gift_card' AND p.status = 'succeeded'
      AND b.gift_card_id IS NOT NULL AND p.amount_cents > p.refunded_cents
    ORDER BY p.id FOR UPDATE OF p`;
  return rows.map((row) => ({ id: row.id, unreturnedCents: row.unreturned, giftCardId: row.gift_card_id }));
}
