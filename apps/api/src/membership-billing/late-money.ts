import type { Db, Membership, Tx } from '@booking/db';
import type Stripe from 'stripe';
import { isAlreadyRefunded } from '../payments/provider-call';
import { invoicePaymentIntent } from '../payments/stripe-ids';
import type { InvoiceFacts } from './billing-facts';

// Money a membership cannot keep: a payment for a period that starts at or after the member (or
// staff) asked for the end; for an end now, also a payment made after that request (an end at
// period end lets the member keep the current period, so its payment is kept whenever it comes);
// and one made after the provider ended the subscription. It never extends or reopens the
// membership; the invoice is marked for review and its payment refunded in full after the commit.

/**
 * When the end was asked for (ours, ms) and whether at period end, and when it happened (the
 * provider's, whole seconds).
 */
export interface Ends {
  endRequestedAt: Date | null;
  atPeriodEnd: boolean;
  endedAt: Date | null;
}

/**
 * The ends of a membership row; `providerEndedAt` stands in for an end not recorded yet. The
 * request is at period end only while the stamp it was asked with stands: an end now takes it
 * over with its own time, and a pod of the previous release stamps no kind, so its requests are
 * judged as an end now (which gives back more, never less).
 */
export function endsOf(
  membership: Pick<Membership, 'endRequestedAt' | 'periodEndRequestedAt' | 'endedAt'>,
  providerEndedAt: Date | null = null,
): Ends {
  const { endRequestedAt, periodEndRequestedAt } = membership;
  return {
    endRequestedAt,
    atPeriodEnd:
      endRequestedAt !== null &&
      periodEndRequestedAt !== null &&
      periodEndRequestedAt.getTime() === endRequestedAt.getTime(),
    endedAt: membership.endedAt ?? providerEndedAt,
  };
}

/**
 * Why the invoice's money cannot be kept, or null when it can, judged only from the times: the
 * end request (and its kind, fixed with it) and the end itself, never from the membership's
 * status at the moment the notification happens to be handled, so every delivery order judges an
 * invoice the same way. The request time is ours (ms); an end the provider reported is in whole
 * seconds, as its invoice times are, so a payment in that same second came first (the provider
 * stops collecting when it ends a subscription).
 */
export function lateReason(ends: Ends, invoice: Pick<InvoiceFacts, 'periodStart' | 'paidAt'>): string | null {
  const { endRequestedAt, endedAt } = ends;
  const after = (time: Date | null, cutoff: Date, inclusive: boolean) =>
    time !== null && (inclusive ? time.getTime() >= cutoff.getTime() : time.getTime() > cutoff.getTime());
  if (
    endRequestedAt &&
    (after(invoice.periodStart, endRequestedAt, true) ||
      (!ends.atPeriodEnd && after(invoice.paidAt, endRequestedAt, true)))
  )
    return 'paid_after_end_requested';
  if (endedAt && (after(invoice.periodStart, endedAt, false) || after(invoice.paidAt, endedAt, false)))
    return 'paid_after_ended';
  return null;
}

/**
 * When a membership ends: paid invoices it had kept whose period or payment falls after the end
 * (a renewal that raced the cancel request) are marked for refund, and expires_at goes back to
 * the end of the last period still paid for. Returns how many were marked.
 */
export async function markLateInvoices(tx: Tx, membership: Ends & { id: string }): Promise<number> {
  const kept = await tx.membershipInvoice.findMany({
    where: { membershipId: membership.id, status: 'paid', reviewReason: null },
    select: { stripeInvoiceId: true, periodStart: true, periodEnd: true, paidAt: true },
  });
  const late = kept.filter((invoice) => lateReason(membership, invoice) !== null);
  for (const invoice of late) {
    await tx.membershipInvoice.update({
      where: { stripeInvoiceId: invoice.stripeInvoiceId },
      data: { reviewReason: lateReason(membership, invoice) },
    });
  }
  if (late.length > 0) {
    const stillPaid = kept.filter((invoice) => !late.includes(invoice) && invoice.periodEnd !== null);
    const paidThrough = stillPaid.reduce<Date | null>(
      (latest, invoice) => (latest && latest >= invoice.periodEnd! ? latest : invoice.periodEnd),
      null,
    );
    if (paidThrough) await tx.membership.update({ where: { id: membership.id }, data: { expiresAt: paidThrough } });
  }
  return late.length;
}

/** Invoices of the membership marked for refund whose refund has not been made yet. */
export async function pendingRefunds(tx: Tx, membershipId: string): Promise<string[]> {
  const rows = await tx.membershipInvoice.findMany({
    where: { membershipId, reviewReason: { not: null }, refundedAt: null },
    select: { stripeInvoiceId: true },
  });
  return rows.map((row) => row.stripeInvoiceId);
}

/**
 * Refunds the payment of each invoice in full and stamps refunded_at. A retry never refunds
 * twice: the provider refuses a second full refund (charge_already_refunded), which counts as
 * done. A failure is thrown: the notification is answered 500 and redelivered, or the
 * reconcile job retries it.
 */
export async function refundLateInvoices(deps: { db: Db; stripe: Stripe }, invoiceIds: string[]): Promise<void> {
  for (const invoiceId of invoiceIds) {
    const invoice = await deps.stripe.invoices.retrieve(invoiceId, { expand: ['payments'] });
    const paymentIntent = invoicePaymentIntent(invoice);
    if (paymentIntent) {
      try {
        await deps.stripe.refunds.create({
          payment_intent: paymentIntent,
          metadata: { invoice_id: invoiceId, automatic: 'true', reason: 'membership could not keep this payment' },
        });
      } catch (error) {
        if (!isAlreadyRefunded(error)) throw error;
      }
    }
    await deps.db.membershipInvoice.updateMany({
      where: { stripeInvoiceId: invoiceId, refundedAt: null },
      data: { refundedAt: new Date() },
    });
  }
}
