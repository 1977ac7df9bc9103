import type Stripe from 'stripe';

/** The id of a Stripe reference that may come expanded (an object) or not (its id). */
export function idOf(value: string | { id: string } | null | undefined): string | null {
  return typeof value === 'string' ? value : (value?.id ?? null);
}

/** The PaymentIntent that paid an invoice (read with `payments` expanded): its paid payment, else its first. */
export function invoicePaymentIntent(invoice: Stripe.Invoice): string | null {
  const payment = invoice.payments?.data.find((candidate) => candidate.status === 'paid') ?? invoice.payments?.data[0];
  return idOf(payment?.payment?.payment_intent ?? null);
}
