import type { BillingState, InvoicePaymentIntent } from './fake-stripe-billing';
import { list } from './fake-stripe-billing-objects';
import { entries, invalid, ok, type Form, type Reply } from './fake-stripe-billing-params';
import type { FakeInvoice, FakeSubscription } from './fake-stripe-billing-types';

// Billing answers as the request expands them: ids stay ids unless asked for, and the includable
// fields (an invoice's confirmation_secret and payments) appear only when asked for.

const INVOICE_EXPANDS = ['confirmation_secret', 'customer', 'payments', 'payments.data.payment.payment_intent'];
const SUBSCRIPTION_EXPANDS = ['customer', 'latest_invoice', ...INVOICE_EXPANDS.map((path) => `latest_invoice.${path}`)];

function badExpansion(paths: string[], allowed: string[]): Reply | undefined {
  const bad = paths.find((path) => !allowed.includes(path));
  return bad === undefined ? undefined : invalid(`This property cannot be expanded (${bad}).`, { param: 'expand' });
}

/** The paths below `field` when the request expands it (`latest_invoice.x` expands latest_invoice too). */
function below(paths: string[], field: string): string[] | undefined {
  const inner = paths.filter((path) => path.startsWith(`${field}.`)).map((path) => path.slice(field.length + 1));
  return paths.includes(field) || inner.length > 0 ? inner : undefined;
}

/** The record of the invoice's one PaymentIntent, as `invoice.payments` lists it in this API version. */
function invoicePayment(invoice: FakeInvoice, intent: InvoicePaymentIntent, expandIntent: boolean) {
  return {
    id: `inpay_${intent.id.slice(3)}`,
    object: 'invoice_payment',
    amount_paid: invoice.status === 'paid' ? invoice.amount_paid : null,
    amount_requested: invoice.amount_due,
    created: intent.created,
    currency: invoice.currency,
    invoice: invoice.id,
    is_default: true,
    livemode: false,
    payment: { type: 'payment_intent', payment_intent: expandIntent ? structuredClone(intent) : intent.id },
    status: invoice.status === 'paid' ? 'paid' : intent.status === 'canceled' ? 'canceled' : 'open',
    status_transitions: {
      canceled_at: invoice.status_transitions.voided_at,
      paid_at: invoice.status_transitions.paid_at,
    },
  };
}

export type BillingAnswers = ReturnType<typeof billingAnswers>;

/** Answers with subscriptions and invoices, expanded as each request asks. */
export function billingAnswers(state: BillingState) {
  function renderInvoice(invoice: FakeInvoice, paths: string[]): Form {
    const out: Form = { ...structuredClone(invoice) };
    const intent = state.invoiceIntents.get(invoice.id);
    // Includable fields: Stripe sends them only when asked for.
    if (paths.includes('confirmation_secret')) {
      out.confirmation_secret = intent ? { client_secret: intent.client_secret, type: 'payment_intent' } : null;
    }
    const payments = below(paths, 'payments');
    if (payments) {
      const expandIntent = payments.includes('data.payment.payment_intent');
      const data = intent ? [invoicePayment(invoice, intent, expandIntent)] : [];
      out.payments = list(data, `/v1/invoice_payments?invoice=${invoice.id}`);
    }
    if (paths.includes('customer')) out.customer = structuredClone(state.customers.get(invoice.customer));
    return out;
  }

  function renderSubscription(subscription: FakeSubscription, paths: string[]): Form {
    const out: Form = { ...structuredClone(subscription) };
    const invoicePaths = below(paths, 'latest_invoice');
    if (invoicePaths && subscription.latest_invoice) {
      out.latest_invoice = renderInvoice(state.invoices.get(subscription.latest_invoice)!, invoicePaths);
    }
    if (paths.includes('customer')) out.customer = structuredClone(state.customers.get(subscription.customer));
    return out;
  }

  /**
   * Makes a change the request has been checked for, then answers with the object as the request
   * expands it. A refused expansion refuses the whole request, before anything changes.
   */
  function answerSubscription(body: Form, change: () => FakeSubscription): Reply {
    const paths = entries(body.expand).map(String);
    return badExpansion(paths, SUBSCRIPTION_EXPANDS) ?? ok(renderSubscription(change(), paths));
  }

  function answerInvoice(body: Form, change: () => FakeInvoice): Reply {
    const paths = entries(body.expand).map(String);
    return badExpansion(paths, INVOICE_EXPANDS) ?? ok(renderInvoice(change(), paths));
  }

  return { answerSubscription, answerInvoice };
}
