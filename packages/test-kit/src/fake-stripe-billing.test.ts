import express from 'express';
import Stripe from 'stripe';
import { startFakeStripe, type FakeStripe } from './fake-stripe';
import { signedBillingEvent } from './fake-stripe-billing-events';
import { periodEnd, shiftPeriod } from './fake-stripe-billing-objects';
import { deliverStripeEvents } from './stripe-event-delivery';

// The fake's Stripe Billing driven through the real SDK, configured as the app's createStripe
// (apps/api/src/payments/stripe-client.ts) configures it from STRIPE_API_BASE.

const SECRET = 'whsec_billing_test';
const MONTH = { interval: 'month', interval_count: 1 } as const;

let fake: FakeStripe;
let stripe: Stripe;

beforeAll(async () => {
  fake = await startFakeStripe();
  const base = new URL(fake.url);
  stripe = new Stripe('sk_test_x', {
    maxNetworkRetries: 2,
    timeout: 10_000,
    host: base.hostname,
    port: Number(base.port),
    protocol: 'http',
  });
});

afterAll(() => fake.stop());

const seconds = () => Math.floor(Date.now() / 1000);

async function monthlyPrice(unitAmount = 2500) {
  const customer = await stripe.customers.create({
    email: 'member@example.com',
    name: 'Ada Member',
    metadata: { member_id: 'm_1' },
  });
  const product = await stripe.products.create({ name: 'Gold membership', metadata: { plan: 'gold' } });
  const price = await stripe.prices.create({
    product: product.id,
    unit_amount: unitAmount,
    currency: 'eur',
    recurring: { interval: 'month', interval_count: 1 },
    metadata: { plan: 'gold' },
  });
  return { customer, product, price };
}

/** A subscription as the app starts one: incomplete, its first invoice's secret expanded. */
async function subscribe(unitAmount = 2500, billingMode: 'classic' | 'flexible' = 'flexible') {
  const { customer, price } = await monthlyPrice(unitAmount);
  const subscription = await stripe.subscriptions.create({
    customer: customer.id,
    items: [{ price: price.id }],
    payment_behavior: 'default_incomplete',
    payment_settings: { save_default_payment_method: 'on_subscription' },
    billing_mode: { type: billingMode },
    metadata: { membership_id: 'mem_1' },
    expand: ['latest_invoice.confirmation_secret'],
  });
  return { customer, price, subscription };
}

const item = (subscription: Stripe.Subscription) => subscription.items.data[0]!;
const invoiceOf = (subscription: Stripe.Subscription) => subscription.latest_invoice as Stripe.Invoice;

describe('customers, products and prices', () => {
  it('creates them as the SDK sends them and reads them back', async () => {
    const { customer, product, price } = await monthlyPrice(1999);
    expect(customer).toMatchObject({ object: 'customer', email: 'member@example.com', name: 'Ada Member' });
    expect(customer.metadata).toEqual({ member_id: 'm_1' });
    expect(product).toMatchObject({ object: 'product', name: 'Gold membership', active: true });
    expect(price).toMatchObject({
      object: 'price',
      product: product.id,
      unit_amount: 1999,
      currency: 'eur',
      type: 'recurring',
      recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed' },
    });
    // The SDK turns the decimal string into its Decimal type: the fake sent a valid one.
    expect(price.unit_amount_decimal?.toString()).toBe('1999');
    await expect(stripe.customers.retrieve(customer.id)).resolves.toMatchObject({ id: customer.id });
    await expect(stripe.prices.retrieve(price.id)).resolves.toMatchObject({ id: price.id, unit_amount: 1999 });
    await expect(stripe.prices.retrieve('price_missing')).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'resource_missing',
      statusCode: 404,
    });
  });

  it('keeps prices immutable: an amount cannot be updated, metadata can', async () => {
    const { price } = await monthlyPrice(2500);
    await expect(
      stripe.prices.update(price.id, { unit_amount: 100 } as Stripe.PriceUpdateParams),
    ).rejects.toMatchObject({ code: 'parameter_unknown', param: 'unit_amount' });
    const updated = await stripe.prices.update(price.id, { metadata: { plan: 'gold-2026', old: '' } });
    expect(updated.metadata).toEqual({ plan: 'gold-2026' });
    expect(updated.unit_amount).toBe(2500);
  });
});

describe('subscriptions', () => {
  it('starts incomplete, with an open first invoice the customer can confirm', async () => {
    const before = seconds();
    const { customer, price, subscription } = await subscribe(2500);
    expect(subscription).toMatchObject({
      object: 'subscription',
      status: 'incomplete',
      customer: customer.id,
      cancel_at_period_end: false,
      billing_mode: { type: 'flexible' },
      payment_settings: { save_default_payment_method: 'on_subscription' },
      metadata: { membership_id: 'mem_1' },
    });
    expect(subscription.items.data).toHaveLength(1);
    const { current_period_start: start, current_period_end: end } = item(subscription);
    expect(start).toBeGreaterThanOrEqual(before);
    expect(end).toBe(shiftPeriod(start, MONTH, 1));
    expect(item(subscription).price.id).toBe(price.id);

    const invoice = invoiceOf(subscription);
    expect(invoice).toMatchObject({
      object: 'invoice',
      status: 'open',
      billing_reason: 'subscription_create',
      amount_due: 2500,
      amount_paid: 0,
      currency: 'eur',
      attempt_count: 0,
      next_payment_attempt: null,
      customer: customer.id,
      period_start: start,
      period_end: start,
      parent: {
        type: 'subscription_details',
        subscription_details: { subscription: subscription.id, metadata: { membership_id: 'mem_1' } },
      },
    });
    expect(invoice.confirmation_secret).toEqual({
      client_secret: expect.stringMatching(/^pi_\w+_secret_/),
      type: 'payment_intent',
    });
    expect(invoice.hosted_invoice_url).toEqual(expect.stringContaining(invoice.id));
    expect(invoice.lines.data[0]).toMatchObject({
      amount: 2500,
      period: { start, end },
      pricing: { price_details: { price: price.id } },
    });
  });

  it('returns latest_invoice as an id unless expanded, and its includable fields only when asked', async () => {
    const { subscription } = await subscribe();
    const plain = await stripe.subscriptions.retrieve(subscription.id);
    expect(plain.latest_invoice).toBe(invoiceOf(subscription).id);
    const expanded = await stripe.subscriptions.retrieve(subscription.id, { expand: ['latest_invoice'] });
    expect(invoiceOf(expanded).id).toBe(invoiceOf(subscription).id);
    expect(invoiceOf(expanded).confirmation_secret).toBeUndefined();
    await expect(
      stripe.subscriptions.retrieve(subscription.id, { expand: ['latest_invoice.nope'] }),
    ).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      param: 'expand',
    });
  });

  it('refuses what it does not model rather than answering wrongly', async () => {
    const { customer, price } = await monthlyPrice();
    const count = fake.billing.subscriptions.size;
    await expect(
      stripe.subscriptions.create({
        customer: customer.id,
        items: [{ price: price.id }],
        payment_behavior: 'allow_incomplete',
      }),
    ).rejects.toMatchObject({ statusCode: 400 });
    await expect(
      stripe.subscriptions.create({
        customer: customer.id,
        items: [{ price: price.id }],
        payment_behavior: 'default_incomplete',
        expand: ['latest_invoice.nope'],
      }),
    ).rejects.toMatchObject({ param: 'expand' });
    expect(fake.billing.subscriptions.size).toBe(count);
  });

  it('becomes active when the first invoice is paid', async () => {
    const { subscription } = await subscribe(2500);
    const change = fake.billing.payFirstInvoice(subscription.id);
    expect(change.subscription.status).toBe('active');
    expect(change.invoice).toMatchObject({ status: 'paid', amount_paid: 2500, amount_remaining: 0, attempt_count: 1 });

    const read = await stripe.subscriptions.retrieve(subscription.id, {
      expand: ['latest_invoice.payments.data.payment.payment_intent'],
    });
    expect(read.status).toBe('active');
    const invoice = invoiceOf(read);
    expect(invoice.status).toBe('paid');
    expect(invoice.status_transitions.paid_at).toEqual(expect.any(Number));
    const intent = invoice.payments!.data[0]!.payment.payment_intent as Stripe.PaymentIntent;
    expect(intent).toMatchObject({ status: 'succeeded', amount_received: 2500 });
    expect(() => fake.billing.payFirstInvoice(subscription.id)).toThrow(/not incomplete/);
  });

  it('renews: a paid cycle invoices the next period and moves the items onto it', async () => {
    const { price, subscription } = await subscribe(2500);
    fake.billing.payFirstInvoice(subscription.id);
    const { current_period_start: start, current_period_end: end } = item(subscription);

    const { subscription: renewed, invoice } = fake.billing.cycle(subscription.id, { outcome: 'paid' });
    const next = shiftPeriod(start, MONTH, 2);
    expect(renewed.status).toBe('active');
    expect(renewed.items.data[0]).toMatchObject({ current_period_start: end, current_period_end: next });
    // As Stripe: the invoice's own period is the one that ended; the line's is the one paid for.
    expect(invoice).toMatchObject({
      billing_reason: 'subscription_cycle',
      status: 'paid',
      amount_paid: 2500,
      period_start: start,
      period_end: end,
    });
    expect(invoice!.lines.data[0]).toMatchObject({ period: { start: end, end: next } });

    const read = await stripe.invoices.retrieve(invoice!.id);
    expect(read.lines.data[0]!.pricing?.price_details?.price).toBe(price.id);
    expect(item(await stripe.subscriptions.retrieve(subscription.id)).current_period_end).toBe(next);
  });

  it('renews with the payment to come: active in the next period while its invoice waits, unattempted, for collection', async () => {
    const { subscription } = await subscribe(2500);
    fake.billing.payFirstInvoice(subscription.id);
    const end = item(subscription).current_period_end;

    const { subscription: renewed, invoice } = fake.billing.cycle(subscription.id, 'later');
    expect(renewed.status).toBe('active');
    expect(renewed.items.data[0]!.current_period_start).toBe(end);
    expect(invoice).toMatchObject({ status: 'open', attempt_count: 0, amount_paid: 0 });
    expect(invoice!.next_payment_attempt).toBeGreaterThan(seconds());
    expect(invoiceOf(await stripe.subscriptions.retrieve(subscription.id, { expand: ['latest_invoice'] })).id).toBe(
      invoice!.id,
    );

    const paid = fake.billing.retryInvoice(invoice!.id, { outcome: 'paid' });
    expect(paid.invoice).toMatchObject({ status: 'paid', attempt_count: 1 });
  });

  it('goes past_due on a failed renewal, unpaid after the final retry, and active once the invoice is paid', async () => {
    const { subscription } = await subscribe(2500);
    fake.billing.payFirstInvoice(subscription.id);
    const end = item(subscription).current_period_end;

    const failed = fake.billing.cycle(subscription.id, { outcome: 'failed', declineCode: 'insufficient_funds' });
    const invoice = failed.invoice!;
    expect(failed.subscription.status).toBe('past_due');
    // The period has moved on even though the payment failed, as Stripe's does.
    expect(failed.subscription.items.data[0]!.current_period_start).toBe(end);
    expect(invoice).toMatchObject({ status: 'open', attempt_count: 1, amount_paid: 0 });
    expect(invoice.next_payment_attempt).toBeGreaterThan(seconds());

    const read = await stripe.invoices.retrieve(invoice.id, { expand: ['payments.data.payment.payment_intent'] });
    const intent = read.payments!.data[0]!.payment.payment_intent as Stripe.PaymentIntent;
    expect(intent.last_payment_error).toMatchObject({ code: 'card_declined', decline_code: 'insufficient_funds' });

    const final = fake.billing.retryInvoice(invoice.id, { outcome: 'failed', final: true });
    expect(final.invoice).toMatchObject({ status: 'open', attempt_count: 2, next_payment_attempt: null });
    expect(final.subscription?.status).toBe('unpaid');
    expect((await stripe.subscriptions.retrieve(subscription.id)).status).toBe('unpaid');

    const paid = fake.billing.retryInvoice(invoice.id, { outcome: 'paid' });
    expect(paid.invoice).toMatchObject({ status: 'paid', attempt_count: 3 });
    expect(paid.subscription?.status).toBe('active');
  });

  it('is canceled after the final failure when the account settings say so, and its invoice is no longer collected', async () => {
    const { subscription } = await subscribe();
    fake.billing.payFirstInvoice(subscription.id);
    const { subscription: ended, invoice } = fake.billing.cycle(subscription.id, {
      outcome: 'failed',
      final: true,
      afterFinal: 'canceled',
    });
    expect(ended).toMatchObject({ status: 'canceled', cancellation_details: { reason: 'payment_failed' } });
    expect(ended.ended_at).toEqual(expect.any(Number));
    expect(invoice).toMatchObject({ status: 'open', next_payment_attempt: null, auto_advance: false });
    expect(() => fake.billing.retryInvoice(invoice!.id, { outcome: 'paid' })).toThrow(/no longer collects/);
  });

  it('pauses and resumes with a new period starting now', async () => {
    const { subscription } = await subscribe();
    fake.billing.payFirstInvoice(subscription.id);
    const paused = await stripe.subscriptions.pause(subscription.id, { type: 'subscription' });
    expect(paused.status).toBe('paused');
    expect(paused.status_details?.paused.subscription.type).toBe('pause_requested');
    expect(() => fake.billing.cycle(subscription.id, { outcome: 'paid' })).toThrow(/paused/);

    const before = seconds();
    const resumed = await stripe.subscriptions.resume(subscription.id, {
      billing_cycle_anchor: { type: 'now' },
      expand: ['latest_invoice'],
    });
    expect(resumed.status).toBe('active');
    expect(resumed.status_details).toBeUndefined();
    const { current_period_start: start, current_period_end: end } = item(resumed);
    expect(start).toBeGreaterThanOrEqual(before);
    expect(end).toBe(shiftPeriod(start, MONTH, 1));
    expect(invoiceOf(resumed)).toMatchObject({
      billing_reason: 'subscription_update',
      status: 'open',
      lines: { data: [{ period: { start, end } }] },
    });
    await expect(stripe.subscriptions.resume(subscription.id)).rejects.toMatchObject({ statusCode: 400 });
  });

  it('pauses without billing the unused time, and refuses to bill it', async () => {
    const { subscription } = await subscribe();
    fake.billing.payFirstInvoice(subscription.id);
    const invoices = fake.billing.invoices.size;
    await expect(
      stripe.subscriptions.pause(subscription.id, { bill_for: { unused_time_from: { type: 'now' } } }),
    ).rejects.toMatchObject({ statusCode: 400 });
    const paused = await stripe.subscriptions.pause(subscription.id, {
      type: 'subscription',
      bill_for: { unused_time_from: { type: 'none' } },
    });
    expect(paused.status).toBe('paused');
    expect(fake.billing.invoices.size).toBe(invoices);
  });

  it('pauses only in flexible billing mode', async () => {
    const { subscription } = await subscribe(2500, 'classic');
    fake.billing.payFirstInvoice(subscription.id);
    await expect(stripe.subscriptions.pause(subscription.id)).rejects.toMatchObject({ statusCode: 400 });
    expect(fake.billing.subscriptions.get(subscription.id)?.status).toBe('active');
  });

  it('updates the price without proration, and cancels at period end', async () => {
    const { subscription } = await subscribe(2500);
    fake.billing.payFirstInvoice(subscription.id);
    const { price: dearer } = await monthlyPrice(3000);
    const itemId = item(subscription).id;
    await expect(
      stripe.subscriptions.update(subscription.id, { items: [{ id: itemId, price: dearer.id }] }),
    ).rejects.toMatchObject({ statusCode: 400 });

    const changed = await stripe.subscriptions.update(subscription.id, {
      items: [{ id: itemId, price: dearer.id }],
      proration_behavior: 'none',
      cancel_at_period_end: true,
      metadata: { note: 'upgraded' },
    });
    expect(item(changed).price.unit_amount).toBe(3000);
    expect(item(changed).current_period_end).toBe(item(subscription).current_period_end);
    expect(changed).toMatchObject({
      cancel_at_period_end: true,
      cancel_at: item(subscription).current_period_end,
      metadata: { membership_id: 'mem_1', note: 'upgraded' },
    });

    const { subscription: ended, invoice } = fake.billing.cycle(subscription.id, { outcome: 'paid' });
    expect(invoice).toBeNull();
    expect(ended).toMatchObject({ status: 'canceled', ended_at: item(subscription).current_period_end });
  });

  it('bills the new price at the next renewal', async () => {
    const { subscription } = await subscribe(2500);
    fake.billing.payFirstInvoice(subscription.id);
    const { price: dearer } = await monthlyPrice(3000);
    await stripe.subscriptions.update(subscription.id, {
      items: [{ id: item(subscription).id, price: dearer.id }],
      proration_behavior: 'none',
    });
    const { invoice } = fake.billing.cycle(subscription.id, { outcome: 'paid' });
    expect(invoice).toMatchObject({
      amount_due: 3000,
      lines: { data: [{ pricing: { price_details: { price: dearer.id } } }] },
    });
  });

  it('bills an upgrade at once with always_invoice: the old price credited, the new one charged', async () => {
    const { subscription } = await subscribe(2500);
    fake.billing.payFirstInvoice(subscription.id);
    const { price: dearer } = await monthlyPrice(3000);
    const changed = await stripe.subscriptions.update(subscription.id, {
      items: [{ id: item(subscription).id, price: dearer.id }],
      proration_behavior: 'always_invoice',
      payment_behavior: 'pending_if_incomplete',
      expand: ['latest_invoice'],
    });
    expect(item(changed).price.id).toBe(dearer.id);
    expect(changed.pending_update).toBeNull();
    const invoice = invoiceOf(changed);
    expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid', attempt_count: 1 });
    const [credit, charge] = invoice.lines.data;
    expect(credit).toMatchObject({ pricing: { price_details: { price: subscription.items.data[0]!.price.id } } });
    expect(charge).toMatchObject({ pricing: { price_details: { price: dearer.id } } });
    expect(credit!.amount).toBeLessThan(0);
    expect(charge!.amount).toBeGreaterThan(0);
    expect(invoice.amount_paid).toBe(credit!.amount + charge!.amount);
    expect(charge!.period.end).toBe(item(subscription).current_period_end);
  });

  it('runs on a clock a test moves: a subscription begun a month back renews in the past, and an upgrade after that renewal is prorated from the change', async () => {
    const monthAgo = seconds() - 40 * 86_400;
    fake.billing.moveClockTo(monthAgo);
    const { subscription } = await subscribe(2500).finally(() => fake.billing.moveClockTo(null));
    expect(item(subscription).current_period_start).toBeGreaterThanOrEqual(monthAgo);
    expect(item(subscription).current_period_start).toBeLessThan(monthAgo + 60);
    fake.billing.payFirstInvoice(subscription.id);
    const { subscription: renewed } = fake.billing.cycle(subscription.id, 'later');
    const renewal = renewed.items.data[0]!;
    expect(renewal.current_period_start).toBeLessThan(seconds());
    const { price: dearer } = await monthlyPrice(3000);
    const changed = await stripe.subscriptions.update(subscription.id, {
      items: [{ id: renewal.id, price: dearer.id }],
      proration_behavior: 'always_invoice',
      payment_behavior: 'pending_if_incomplete',
      expand: ['latest_invoice'],
    });
    const charge = invoiceOf(changed).lines.data.at(-1)!;
    expect(charge.parent?.subscription_item_details?.proration).toBe(true);
    expect(charge.period.start).toBeGreaterThanOrEqual(seconds() - 5);
    expect(charge.period.end).toBe(renewal.current_period_end);
    expect(charge.amount).toBeLessThan(3000);
  });

  it('keeps a declined upgrade pending with pending_if_incomplete until its invoice is paid, or drops it when it expires', async () => {
    const { subscription } = await subscribe(2500);
    fake.billing.payFirstInvoice(subscription.id);
    const { price: dearer } = await monthlyPrice(3000);
    const upgrade = () =>
      stripe.subscriptions.update(subscription.id, {
        items: [{ id: item(subscription).id, price: dearer.id }],
        proration_behavior: 'always_invoice',
        payment_behavior: 'pending_if_incomplete',
      });
    fake.billing.failNextPayments(1, 'insufficient_funds');
    const pending = await upgrade();
    expect(pending.status).toBe('active');
    expect(item(pending).price.unit_amount).toBe(2500);
    expect(pending.pending_update?.subscription_items?.[0]?.price.id).toBe(dearer.id);
    const applied = fake.billing.retryInvoice(pending.latest_invoice as string, { outcome: 'paid' });
    expect(applied.subscription).toMatchObject({
      pending_update: null,
      items: { data: [{ price: { id: dearer.id } }] },
    });

    const { price: dearest } = await monthlyPrice(4000);
    fake.billing.failNextPayments(1);
    await stripe.subscriptions.update(subscription.id, {
      items: [{ id: item(subscription).id, price: dearest.id }],
      proration_behavior: 'always_invoice',
      payment_behavior: 'pending_if_incomplete',
    });
    const expired = fake.billing.expirePendingUpdate(subscription.id);
    expect(expired.subscription).toMatchObject({ status: 'active', pending_update: null });
    expect(expired.subscription.items.data[0]!.price.id).toBe(dearer.id);
    expect(expired.invoice.status).toBe('void');
  });

  it('cancels now: canceled, and its open invoices stop being collected', async () => {
    const { subscription } = await subscribe();
    fake.billing.payFirstInvoice(subscription.id);
    const { invoice } = fake.billing.cycle(subscription.id, { outcome: 'failed' });
    const canceled = await stripe.subscriptions.cancel(subscription.id, { expand: ['latest_invoice'] });
    expect(canceled.status).toBe('canceled');
    expect(canceled.ended_at).toEqual(expect.any(Number));
    expect(canceled.canceled_at).toEqual(expect.any(Number));
    expect(invoiceOf(canceled)).toMatchObject({ id: invoice!.id, status: 'open', next_payment_attempt: null });
    await expect(stripe.subscriptions.cancel(subscription.id)).rejects.toMatchObject({ statusCode: 400 });
  });

  it('expires when the first invoice is never paid', async () => {
    const { subscription } = await subscribe();
    const { subscription: expired, invoice } = fake.billing.expireIncomplete(subscription.id);
    expect(expired.status).toBe('incomplete_expired');
    expect(invoice.status).toBe('void');
    const read = await stripe.invoices.retrieve(invoice.id);
    expect(read.status_transitions.voided_at).toEqual(expect.any(Number));
    expect((await stripe.subscriptions.retrieve(subscription.id)).status).toBe('incomplete_expired');
  });

  it('replays an idempotent create instead of making a second subscription', async () => {
    const { customer, price } = await monthlyPrice();
    const params = {
      customer: customer.id,
      items: [{ price: price.id }],
      payment_behavior: 'default_incomplete' as const,
    };
    const first = await stripe.subscriptions.create(params, { idempotencyKey: `sub-${customer.id}` });
    const count = fake.billing.subscriptions.size;
    const again = await stripe.subscriptions.create(params, { idempotencyKey: `sub-${customer.id}` });
    expect(again.id).toBe(first.id);
    expect(fake.billing.subscriptions.size).toBe(count);
  });
});

describe('invoices', () => {
  it('makes a one-off invoice from pending items, finalizes, pays and voids', async () => {
    const { customer } = await monthlyPrice();
    const item1 = await stripe.invoiceItems.create({
      customer: customer.id,
      amount: 1200,
      currency: 'eur',
      description: 'Guest pass',
    });
    expect(item1).toMatchObject({ object: 'invoiceitem', invoice: null, amount: 1200 });
    const draft = await stripe.invoices.create({
      customer: customer.id,
      auto_advance: false,
      collection_method: 'charge_automatically',
      pending_invoice_items_behavior: 'include',
      metadata: { order: 'o_1' },
    });
    expect(draft).toMatchObject({
      status: 'draft',
      billing_reason: 'manual',
      amount_due: 1200,
      number: null,
      parent: null,
    });
    expect(draft.lines.data[0]).toMatchObject({
      amount: 1200,
      parent: { invoice_item_details: { invoice_item: item1.id } },
    });

    const open = await stripe.invoices.finalizeInvoice(draft.id);
    expect(open.status).toBe('open');
    expect(open.number).toMatch(/^[0-9A-F]{8}-0001$/);
    const paid = await stripe.invoices.pay(open.id);
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 1200, attempt_count: 1 });
    await expect(stripe.invoices.voidInvoice(paid.id)).rejects.toMatchObject({ statusCode: 400 });

    await stripe.invoiceItems.create({ customer: customer.id, amount: 700, currency: 'eur' });
    const fee = await stripe.invoices.create({
      customer: customer.id,
      auto_advance: true,
      pending_invoice_items_behavior: 'include',
    });
    const collected = await stripe.invoices.finalizeInvoice(fee.id);
    // Stripe collects an auto-advancing invoice by itself, soon after finalizing it.
    expect(collected.next_payment_attempt).toBeGreaterThan(seconds());
    fake.billing.failNextPayments(1, 'expired_card');
    await expect(stripe.invoices.pay(collected.id)).rejects.toMatchObject({
      type: 'StripeCardError',
      code: 'card_declined',
      decline_code: 'expired_card',
      statusCode: 402,
    });
    expect(fake.billing.invoices.get(collected.id)).toMatchObject({ status: 'open', attempt_count: 1 });
    expect(fake.billing.retryInvoice(collected.id, { outcome: 'paid' }).invoice.status).toBe('paid');

    await stripe.invoiceItems.create({ customer: customer.id, amount: 500, currency: 'eur' });
    const second = await stripe.invoices.create({ customer: customer.id, pending_invoice_items_behavior: 'include' });
    const voided = await stripe.invoices.voidInvoice((await stripe.invoices.finalizeInvoice(second.id)).id);
    expect(voided).toMatchObject({ status: 'void', amount_due: 500, number: expect.stringMatching(/-0003$/) });
  });
});

describe('signed events and their delivery', () => {
  it('carries the object as it was when the event was made', async () => {
    const { subscription } = await subscribe();
    fake.billing.payFirstInvoice(subscription.id);
    const failed = fake.billing.cycle(subscription.id, { outcome: 'failed' });
    const event = signedBillingEvent('customer.subscription.updated', failed.subscription, {
      secret: SECRET,
      previousAttributes: { status: 'active' },
    });
    fake.billing.retryInvoice(failed.invoice!.id, { outcome: 'paid' });

    const read = stripe.webhooks.constructEvent(event.payload, event.signature, SECRET);
    expect(read.type).toBe('customer.subscription.updated');
    const object = read.data.object as Stripe.Subscription;
    expect(object.status).toBe('past_due');
    expect(read.data.previous_attributes).toEqual({ status: 'active' });
    expect(fake.billing.subscriptions.get(subscription.id)?.status).toBe('active');
  });

  it('delivers in the order asked, twice when duplicated, and all at once when concurrent', async () => {
    const received: string[] = [];
    const app = express();
    app.post('/api/payments/stripe/webhook', express.raw({ type: 'application/json' }), (req, res) => {
      const event = stripe.webhooks.constructEvent(req.body as Buffer, req.get('Stripe-Signature') ?? '', SECRET);
      received.push(event.id);
      res.json({ received: event.id });
    });
    const { subscription } = await subscribe();
    const created = signedBillingEvent(
      'customer.subscription.created',
      fake.billing.subscriptions.get(subscription.id)!,
      {
        secret: SECRET,
        eventId: 'evt_created',
      },
    );
    const { invoice } = fake.billing.payFirstInvoice(subscription.id);
    const paid = signedBillingEvent('invoice.paid', invoice, { secret: SECRET, eventId: 'evt_paid' });

    const responses = await deliverStripeEvents({ app }, [created, paid], { order: 'reversed', duplicate: true });
    expect(received).toEqual(['evt_paid', 'evt_created', 'evt_paid', 'evt_created']);
    expect(responses.map((response) => response.body.received)).toEqual(received);

    received.length = 0;
    const together = await deliverStripeEvents({ app }, [created, paid], { concurrent: true });
    expect(together.map((response) => response.status)).toEqual([200, 200]);
    expect(received.sort()).toEqual(['evt_created', 'evt_paid']);
  });
});

describe('billing periods', () => {
  it('keeps the anchor day, clamped to short months, as Stripe counts them', () => {
    const jan31 = Date.UTC(2026, 0, 31, 12) / 1000;
    expect(shiftPeriod(jan31, MONTH, 1)).toBe(Date.UTC(2026, 1, 28, 12) / 1000);
    expect(shiftPeriod(jan31, MONTH, 2)).toBe(Date.UTC(2026, 2, 31, 12) / 1000);
    expect(shiftPeriod(jan31, { interval: 'year', interval_count: 1 }, 1)).toBe(Date.UTC(2027, 0, 31, 12) / 1000);
    expect(shiftPeriod(jan31, { interval: 'week', interval_count: 2 }, 1)).toBe(jan31 + 14 * 86_400);
    const recurring = { ...MONTH, meter: null, trial_period_days: null, usage_type: 'licensed' } as const;
    // The period after Feb 28 ends on Mar 31, not Mar 28: counted from the anchor, not chained.
    expect(periodEnd(jan31, recurring, Date.UTC(2026, 1, 28, 12) / 1000)).toBe(Date.UTC(2026, 2, 31, 12) / 1000);
  });
});
