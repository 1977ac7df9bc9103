import { randomBytes } from 'node:crypto';
import type { FakePaymentIntent } from './fake-stripe';
import {
  moveClockTo,
  newId,
  newInvoice,
  newSubscription,
  now,
  periodEnd,
  planOf,
  prorationLine,
  subscriptionLine,
  list,
  type InvoiceFields,
} from './fake-stripe-billing-objects';
import type {
  AttemptOutcome,
  BillingChange,
  BillingReason,
  FakeCustomer,
  FakeInvoice,
  FakeInvoiceItem,
  FakeInvoiceLine,
  FakePrice,
  FakeProduct,
  FakeSubscription,
  FakeSubscriptionItem,
} from './fake-stripe-billing-types';

// Stripe Billing's state for the fake: subscriptions, their invoices and the PaymentIntents that
// collect them. The routes (fake-stripe-billing-routes.ts) change it as the API would; the
// controls at the end stand for what Stripe does on its own (a renewal, a retry, an expiry).
// There is no test clock: timestamps are the real time a step ran, and each billing period starts
// where the previous one ended.

/** When a failed renewal is tried again: a fixed delay stands in for Smart Retries. */
const RETRY_AFTER = 3 * 86_400;
/** Stripe collects an invoice that advances on its own about an hour after finalizing it. */
const COLLECT_AFTER = 3600;
/** How long a pending update waits for its invoice to be paid. */
const PENDING_UPDATE_LIFETIME = 23 * 3600;

/** Controls and answers hand out copies, so a later change never rewrites what a test already holds. */
const snapshot = <T>(value: T): T => structuredClone(value);

/**
 * The PaymentIntent of an invoice, with the error its last failed attempt left. It is in
 * `fake.intents` too, so GET /v1/payment_intents/:id answers it, but `fake.succeed` does not pay
 * the invoice: the controls below do.
 */
export type InvoicePaymentIntent = FakePaymentIntent & {
  last_payment_error: { type: 'card_error'; code: 'card_declined'; decline_code: string; message: string } | null;
};

export type BillingState = ReturnType<typeof createBillingState>;

export function createBillingState(intents: Map<string, FakePaymentIntent>) {
  const customers = new Map<string, FakeCustomer>();
  const products = new Map<string, FakeProduct>();
  const prices = new Map<string, FakePrice>();
  const subscriptions = new Map<string, FakeSubscription>();
  const invoices = new Map<string, FakeInvoice>();
  const invoiceItems = new Map<string, FakeInvoiceItem>();
  /** The PaymentIntent collecting each finalized invoice, by invoice id. */
  const invoiceIntents = new Map<string, InvoicePaymentIntent>();
  /** Payments the API asks for (an invoice's pay, an upgrade billed at once) that will be declined. */
  const declines = { remaining: 0, declineCode: 'generic_decline' };

  function found<T>(map: Map<string, T>, key: string, kind: string): T {
    const value = map.get(key);
    if (!value) throw new Error(`fake Stripe has no ${kind} ${key}`);
    return value;
  }

  function subscriptionOf(invoice: FakeInvoice): FakeSubscription | undefined {
    const subscriptionId = invoice.parent?.subscription_details.subscription;
    return subscriptionId === undefined ? undefined : subscriptions.get(subscriptionId);
  }

  /** Every item shares one period; the first stands for them all. */
  const firstItem = (subscription: FakeSubscription) => subscription.items.data[0]!;

  function draftInvoice(customer: FakeCustomer, fields: InvoiceFields) {
    const invoice = newInvoice(customer, fields);
    invoices.set(invoice.id, invoice);
    return invoice;
  }

  function setLines(invoice: FakeInvoice, lines: FakeInvoiceLine[]) {
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    Object.assign(invoice, {
      lines: list(lines, invoice.lines.url),
      amount_due: total,
      amount_remaining: total,
      subtotal: total,
      subtotal_excluding_tax: total,
      total,
      total_excluding_tax: total,
    });
  }

  function markPaid(invoice: FakeInvoice) {
    Object.assign(invoice, { status: 'paid', amount_paid: invoice.amount_due, amount_remaining: 0 });
    invoice.next_payment_attempt = null;
    invoice.status_transitions.paid_at = now();
    const intent = invoiceIntents.get(invoice.id);
    if (intent)
      Object.assign(intent, { status: 'succeeded', amount_received: intent.amount, last_payment_error: null });
    // As Stripe: paying the newest invoice is what makes the subscription active again, and what
    // applies an update that was waiting for it.
    const subscription = subscriptionOf(invoice);
    if (subscription?.latest_invoice !== invoice.id) return;
    if (['incomplete', 'past_due', 'unpaid'].includes(subscription.status)) subscription.status = 'active';
    if (subscription.pending_update) {
      for (const pending of subscription.pending_update.subscription_items)
        swapPrice(subscription, pending.id, pending.price);
      subscription.pending_update = null;
    }
  }

  function swapPrice(subscription: FakeSubscription, itemId: string, price: FakePrice) {
    const item = subscription.items.data.find((candidate) => candidate.id === itemId);
    if (item) Object.assign(item, { price, plan: planOf(price) });
  }

  function finalize(invoice: FakeInvoice) {
    const at = now();
    const customer = found(customers, invoice.customer, 'customer');
    invoice.status = 'open';
    invoice.number = `${customer.invoice_prefix}-${String(customer.next_invoice_sequence++).padStart(4, '0')}`;
    invoice.hosted_invoice_url = `https://invoice.stripe.com/i/acct_fake/test_${invoice.id}`;
    invoice.invoice_pdf = `${invoice.hosted_invoice_url}/pdf`;
    invoice.status_transitions.finalized_at = at;
    Object.assign(invoice, { effective_at: at, ending_balance: 0, automatically_finalizes_at: null });
    // Stripe marks an invoice with nothing to pay paid as it finalizes it.
    if (invoice.amount_due === 0) return markPaid(invoice);
    // A subscription's first invoice waits for the customer to pay it on-session instead.
    const collected =
      invoice.auto_advance &&
      invoice.collection_method === 'charge_automatically' &&
      invoice.billing_reason !== 'subscription_create';
    invoice.next_payment_attempt = collected ? at + COLLECT_AFTER : null;
    const intentId = newId('pi');
    const intent: InvoicePaymentIntent = {
      id: intentId,
      object: 'payment_intent',
      amount: invoice.amount_due,
      currency: invoice.currency,
      client_secret: `${intentId}_secret_${randomBytes(12).toString('hex')}`,
      status: 'requires_payment_method',
      metadata: {},
      amount_received: 0,
      automatic_payment_methods: null,
      payment_method_types: ['card'],
      livemode: false,
      created: at,
      last_payment_error: null,
    };
    intents.set(intentId, intent);
    invoiceIntents.set(invoice.id, intent);
  }

  function voidInvoice(invoice: FakeInvoice) {
    invoice.status = 'void';
    invoice.next_payment_attempt = null;
    invoice.status_transitions.voided_at = now();
    const intent = invoiceIntents.get(invoice.id);
    if (intent) intent.status = 'canceled';
  }

  /** Ends a subscription; Stripe then stops collecting its open invoices (its default setting). */
  function endSubscription(
    subscription: FakeSubscription,
    endedAt: number,
    reason: 'cancellation_requested' | 'payment_failed',
    canceledAt = endedAt,
  ) {
    Object.assign(subscription, { status: 'canceled', ended_at: endedAt, canceled_at: canceledAt });
    subscription.cancellation_details.reason = reason;
    for (const invoice of invoices.values()) {
      if (subscriptionOf(invoice) === subscription && invoice.status === 'open') {
        invoice.auto_advance = false;
        invoice.next_payment_attempt = null;
      }
    }
  }

  /** One payment attempt on an open invoice, and what it does to the subscription it belongs to. */
  function attempt(invoice: FakeInvoice, result: AttemptOutcome) {
    const at = now();
    invoice.attempt_count += 1;
    invoice.attempted = true;
    if (result.outcome === 'paid') return markPaid(invoice);
    found(invoiceIntents, invoice.id, 'PaymentIntent for invoice').last_payment_error = {
      type: 'card_error',
      code: 'card_declined',
      decline_code: result.declineCode ?? 'generic_decline',
      message: 'Your card was declined.',
    };
    // Stripe never retries a first invoice itself: the customer pays it on-session.
    const retried = !result.final && invoice.billing_reason !== 'subscription_create';
    invoice.next_payment_attempt = retried ? at + RETRY_AFTER : null;
    const subscription = subscriptionOf(invoice);
    if (!subscription || subscription.latest_invoice !== invoice.id || subscription.status === 'incomplete') return;
    const after = result.final ? (result.afterFinal ?? 'unpaid') : 'past_due';
    if (after === 'canceled') endSubscription(subscription, at, 'payment_failed');
    else subscription.status = after;
  }

  function subscriptionInvoiceFields(subscription: FakeSubscription, reason: BillingReason): InvoiceFields {
    return {
      currency: subscription.currency,
      billing_reason: reason,
      auto_advance: true,
      collection_method: 'charge_automatically',
      metadata: {},
      due_date: null,
      parent: {
        type: 'subscription_details',
        quote_details: null,
        subscription_details: { metadata: { ...subscription.metadata }, subscription: subscription.id },
      },
    };
  }

  /** Makes and finalizes the subscription's next invoice, billing its items' current period. */
  function subscriptionInvoice(
    subscription: FakeSubscription,
    reason: BillingReason,
    gathered: { start: number; end: number },
  ) {
    const invoice = draftInvoice(found(customers, subscription.customer, 'customer'), {
      ...subscriptionInvoiceFields(subscription, reason),
      period_start: gathered.start,
      period_end: gathered.end,
    });
    const productName = (productId: string) => products.get(productId)?.name ?? productId;
    setLines(
      invoice,
      subscription.items.data.map((item) => subscriptionLine(invoice, item, productName(item.price.product))),
    );
    subscription.latest_invoice = invoice.id;
    finalize(invoice);
    return invoice;
  }

  function nextApiAttempt(): AttemptOutcome {
    if (declines.remaining === 0) return { outcome: 'paid' };
    declines.remaining -= 1;
    return { outcome: 'failed', declineCode: declines.declineCode };
  }

  function startPeriod(subscription: FakeSubscription, start: number) {
    for (const item of subscription.items.data) {
      item.current_period_start = start;
      item.current_period_end = periodEnd(subscription.billing_cycle_anchor, item.price.recurring!, start);
    }
  }

  return {
    customers,
    products,
    prices,
    subscriptions,
    invoices,
    invoiceItems,
    invoiceIntents,
    draftInvoice,
    setLines,
    finalize,
    voidInvoice,
    markPaid,
    attempt,
    endSubscription,

    /** POST /v1/subscriptions with payment_behavior=default_incomplete. */
    createSubscription(input: Parameters<typeof newSubscription>[0]) {
      const subscription = newSubscription(input);
      subscriptions.set(subscription.id, subscription);
      const at = subscription.created;
      // A first invoice with nothing to pay is paid as it is made, and the subscription starts active.
      if (subscriptionInvoice(subscription, 'subscription_create', { start: at, end: at }).status === 'paid') {
        subscription.status = 'active';
      }
      return subscription;
    },

    /** POST /v1/subscriptions/:id/pause: no invoices and no new periods until it resumes. */
    pause(subscription: FakeSubscription) {
      subscription.status = 'paused';
      subscription.status_details = {
        paused: { subscription: { type: 'pause_requested' }, transitioned_at: now(), type: 'subscription' },
      };
    },

    /**
     * POST /v1/subscriptions/:id/resume with billing_cycle_anchor=now: active at once, a new period
     * from now, and its invoice, which Stripe collects right away (settle it with retryInvoice).
     */
    resume(subscription: FakeSubscription) {
      const at = now();
      subscription.status = 'active';
      delete subscription.status_details;
      subscription.billing_cycle_anchor = at;
      startPeriod(subscription, at);
      subscriptionInvoice(subscription, 'subscription_update', { start: at, end: at });
    },

    /**
     * POST /v1/subscriptions/:id with new prices. With `prorate` (proration_behavior=
     * always_invoice) the rest of the period is billed at once and attempted; if that payment is
     * declined, `pendingIfIncomplete` keeps the subscription as it was with a pending_update,
     * otherwise the change stands and the subscription is past_due, as Stripe does.
     */
    changePrices(
      subscription: FakeSubscription,
      swaps: { item: FakeSubscriptionItem; price: FakePrice }[],
      options: { prorate: boolean; pendingIfIncomplete: boolean },
    ) {
      if (!options.prorate || swaps.length === 0) {
        for (const { item, price } of swaps) swapPrice(subscription, item.id, price);
        return;
      }
      const at = now();
      const invoice = draftInvoice(found(customers, subscription.customer, 'customer'), {
        ...subscriptionInvoiceFields(subscription, 'subscription_update'),
        period_start: at,
        period_end: at,
      });
      const productName = (productId: string) => products.get(productId)?.name ?? productId;
      setLines(
        invoice,
        swaps.flatMap(({ item, price }) => [
          prorationLine(invoice, item, productName(item.price.product), at, -1),
          prorationLine(invoice, { ...item, price }, productName(price.product), at, 1),
        ]),
      );
      subscription.latest_invoice = invoice.id;
      finalize(invoice);
      const status = subscription.status;
      if (invoice.status === 'open') attempt(invoice, nextApiAttempt());
      if (invoice.status === 'paid' || !options.pendingIfIncomplete) {
        for (const { item, price } of swaps) swapPrice(subscription, item.id, price);
        return;
      }
      // pending_if_incomplete: nothing changes until the invoice is paid.
      subscription.status = status;
      subscription.pending_update = {
        billing_cycle_anchor: null,
        cancel_at_period_end: null,
        discount: null,
        discounts: null,
        expires_at: at + PENDING_UPDATE_LIFETIME,
        metadata: null,
        subscription_items: swaps.map(({ item, price }) => ({ ...structuredClone(item), price, plan: planOf(price) })),
        trial_end: null,
        trial_from_plan: null,
      };
    },

    /** The outcome of the next payment the API asks for (see failNextPayments). */
    nextApiAttempt,

    setCancelAtPeriodEnd(subscription: FakeSubscription, cancel: boolean) {
      subscription.cancel_at_period_end = cancel;
      subscription.cancel_at = cancel ? firstItem(subscription).current_period_end : null;
      // As Stripe: canceled_at is when the cancellation was asked for, not when it takes effect.
      subscription.canceled_at = cancel ? now() : null;
    },

    // The controls: what Stripe does on its own, run by the test.

    /**
     * Stripe's clock, as a test clock moved to `at` (seconds, back or forward): what happens from
     * now on (a subscription started, a price change prorated, a payment, an end) is stamped as if
     * it were `at` and later. Moved back while a subscription starts, its renewal comes due in the
     * past, so the test can act inside the renewed period. `null` puts the real time back. One
     * clock for every fake Stripe of the test file: put it back when done.
     */
    moveClockTo,

    /**
     * The next `count` payments the API asks for (POST /v1/invoices/:id/pay, a price change billed
     * at once) are declined with `declineCode`.
     */
    failNextPayments(count: number, declineCode = 'generic_decline') {
      Object.assign(declines, { remaining: count, declineCode });
    },

    /** A pending update's invoice went unpaid for 23 hours: the update is dropped and the invoice voided. */
    expirePendingUpdate(subscriptionId: string): BillingChange {
      const subscription = found(subscriptions, subscriptionId, 'subscription');
      if (!subscription.pending_update) throw new Error(`fake Stripe: ${subscriptionId} has no pending update`);
      subscription.pending_update = null;
      const invoice = found(invoices, subscription.latest_invoice!, 'invoice');
      if (invoice.status === 'open') voidInvoice(invoice);
      return { subscription: snapshot(subscription), invoice: snapshot(invoice) };
    },

    /** The customer confirms the first invoice's payment: incomplete → active. */
    payFirstInvoice(subscriptionId: string): BillingChange {
      const subscription = found(subscriptions, subscriptionId, 'subscription');
      if (subscription.status !== 'incomplete') {
        throw new Error(`fake Stripe: ${subscriptionId} is ${subscription.status}, not incomplete`);
      }
      const invoice = found(invoices, subscription.latest_invoice!, 'invoice');
      attempt(invoice, { outcome: 'paid' });
      return { subscription: snapshot(subscription), invoice: snapshot(invoice) };
    },

    /**
     * The current period ends. As Stripe, the items move on to the next period whatever the
     * payment does, and its invoice (billing_reason subscription_cycle) is attempted: paid →
     * active; failed → past_due with a retry scheduled, or, when `final`, the `afterFinal` status;
     * `later`: not attempted yet (Stripe collects a renewal about an hour after it starts the
     * period; settle it with retryInvoice), and the subscription stays active meanwhile.
     * A subscription set to cancel at period end is canceled instead, with no invoice.
     */
    cycle(
      subscriptionId: string,
      result: AttemptOutcome | 'later',
    ): { subscription: FakeSubscription; invoice: FakeInvoice | null } {
      const subscription = found(subscriptions, subscriptionId, 'subscription');
      if (subscription.status !== 'active' && subscription.status !== 'past_due') {
        throw new Error(`fake Stripe: ${subscriptionId} is ${subscription.status}; only active or past_due ones renew`);
      }
      const { current_period_start: start, current_period_end: end } = firstItem(subscription);
      if (subscription.cancel_at_period_end) {
        endSubscription(subscription, end, 'cancellation_requested', subscription.canceled_at ?? end);
        return { subscription: snapshot(subscription), invoice: null };
      }
      startPeriod(subscription, end);
      const invoice = subscriptionInvoice(subscription, 'subscription_cycle', { start, end });
      if (invoice.status === 'open' && result !== 'later') attempt(invoice, result);
      return { subscription: snapshot(subscription), invoice: snapshot(invoice) };
    },

    /** Stripe tries an open invoice again (a scheduled retry, or the customer confirming it). */
    retryInvoice(
      invoiceId: string,
      result: AttemptOutcome,
    ): { invoice: FakeInvoice; subscription: FakeSubscription | null } {
      const invoice = found(invoices, invoiceId, 'invoice');
      if (invoice.status !== 'open')
        throw new Error(`fake Stripe: invoice ${invoiceId} is ${invoice.status}, not open`);
      const subscription = subscriptionOf(invoice);
      if (subscription?.status === 'canceled' || subscription?.status === 'incomplete_expired') {
        throw new Error(
          `fake Stripe: ${subscription.id} is ${subscription.status}; Stripe no longer collects its invoices`,
        );
      }
      attempt(invoice, result);
      return { invoice: snapshot(invoice), subscription: subscription ? snapshot(subscription) : null };
    },

    /** 23 hours pass with the first invoice unpaid: incomplete_expired, and the invoice void. */
    expireIncomplete(subscriptionId: string): BillingChange {
      const subscription = found(subscriptions, subscriptionId, 'subscription');
      if (subscription.status !== 'incomplete') {
        throw new Error(`fake Stripe: ${subscriptionId} is ${subscription.status}, not incomplete`);
      }
      const invoice = found(invoices, subscription.latest_invoice!, 'invoice');
      Object.assign(subscription, { status: 'incomplete_expired', ended_at: now() });
      voidInvoice(invoice);
      return { subscription: snapshot(subscription), invoice: snapshot(invoice) };
    },
  };
}

/** What tests see of the billing state: the objects by id, and the controls. */
export type FakeBilling = Pick<
  BillingState,
  | 'customers'
  | 'products'
  | 'prices'
  | 'subscriptions'
  | 'invoices'
  | 'invoiceItems'
  | 'payFirstInvoice'
  | 'cycle'
  | 'retryInvoice'
  | 'expireIncomplete'
  | 'expirePendingUpdate'
  | 'failNextPayments'
  | 'moveClockTo'
>;
