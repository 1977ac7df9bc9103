import type Stripe from 'stripe';
import { idOf } from '../payments/stripe-ids';

/** What an invoice says, read once from Stripe's object (a notification's copy or a fresh read). */
export interface InvoiceFacts {
  invoiceId: string;
  subscriptionId: string | null;
  billingReason: string;
  status: string;
  attemptCount: number;
  amountDueCents: number;
  amountPaidCents: number;
  /** Upper-case, as the rest of the service writes currencies. */
  currency: string;
  /** The price the subscription line bills; null for an invoice without one (a freeze fee). */
  priceId: string | null;
  /** The service period the invoice pays for (the subscription line's period). */
  periodStart: Date | null;
  periodEnd: Date | null;
  /** The subscription line is a proration: it bills from a change to the period's end. */
  proration: boolean;
  paidAt: Date | null;
  nextPaymentAttempt: Date | null;
  hostedInvoiceUrl: string | null;
  metadata: Record<string, string>;
}

const at = (seconds: number | null | undefined) => (seconds ? new Date(seconds * 1000) : null);

/** The subscription an invoice bills (`parent.subscription_details` in this API version). */
export function subscriptionOfInvoice(invoice: Stripe.Invoice): string | null {
  return idOf(invoice.parent?.subscription_details?.subscription ?? null);
}

export function invoiceFacts(invoice: Stripe.Invoice): InvoiceFacts {
  const lines = invoice.lines?.data ?? [];
  // The line that bills a subscription item carries the price and the period paid for. An
  // upgrade's invoice first credits the unused time of the old price (a negative line), then
  // charges the new one: the price paid for is the last line that charges.
  const itemLines = lines.filter((candidate) => candidate.parent?.type === 'subscription_item_details');
  const line = itemLines.filter((candidate) => candidate.amount > 0).at(-1) ?? itemLines.at(-1) ?? lines[0];
  const price = line?.pricing?.price_details?.price;
  return {
    invoiceId: invoice.id,
    subscriptionId: subscriptionOfInvoice(invoice),
    billingReason: invoice.billing_reason ?? 'manual',
    status: invoice.status ?? 'open',
    attemptCount: invoice.attempt_count,
    amountDueCents: invoice.amount_due,
    amountPaidCents: invoice.amount_paid,
    currency: invoice.currency.toUpperCase(),
    priceId: price === undefined ? null : idOf(price),
    periodStart: at(line?.period?.start),
    periodEnd: at(line?.period?.end),
    proration: line?.parent?.subscription_item_details?.proration ?? false,
    paidAt: at(invoice.status_transitions?.paid_at),
    nextPaymentAttempt: at(invoice.next_payment_attempt),
    hostedInvoiceUrl: invoice.hosted_invoice_url ?? null,
    metadata: invoice.metadata ?? {},
  };
}

const SUBSCRIPTION_REASONS = ['subscription_create', 'subscription_cycle', 'subscription_update'];

/** Whether the invoice bills the membership's subscription (not a freeze fee, not a manual one). */
export function billsSubscription(facts: Pick<InvoiceFacts, 'billingReason'>): boolean {
  return SUBSCRIPTION_REASONS.includes(facts.billingReason);
}

/**
 * Whether the invoice pays for a billing period, from its start: the first invoice, a renewal, a
 * resume's (a new period from the resume). An upgrade's invoice does not, though it bills to the
 * period's end: its lines are prorations, from the change on, and the period itself is paid (or
 * not) by its own invoice, which may still be open when the upgrade is paid.
 */
export function paysForPeriod(facts: Pick<InvoiceFacts, 'billingReason' | 'proration'>): boolean {
  return billsSubscription(facts) && !facts.proration;
}

/** The billing period of a subscription: it lives on its items in this API version. */
export function subscriptionPeriod(subscription: Stripe.Subscription): { start: Date; end: Date } | null {
  const item = subscription.items?.data?.[0];
  if (!item) return null;
  return { start: new Date(item.current_period_start * 1000), end: new Date(item.current_period_end * 1000) };
}

/** The subscription's newest invoice when the read expanded it. */
export function latestInvoiceOf(subscription: Stripe.Subscription): Stripe.Invoice | null {
  const latest = subscription.latest_invoice;
  return latest && typeof latest === 'object' ? latest : null;
}

/** When the provider ended the subscription, or null while it runs. */
export function subscriptionEndedAt(subscription: Stripe.Subscription): Date | null {
  if (subscription.status !== 'canceled' && subscription.status !== 'incomplete_expired') return null;
  return at(subscription.ended_at ?? subscription.canceled_at) ?? new Date();
}
