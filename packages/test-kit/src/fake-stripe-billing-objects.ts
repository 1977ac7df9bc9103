import { randomBytes } from 'node:crypto';
import type {
  FakeCustomer,
  FakeInvoice,
  FakeInvoiceItem,
  FakeInvoiceLine,
  FakePlan,
  FakePrice,
  FakeProduct,
  FakeRecurring,
  FakeSubscription,
  FakeSubscriptionItem,
  Metadata,
} from './fake-stripe-billing-types';

// New Stripe Billing objects with every field in place, and the calendar of billing periods. No
// state here but the clock: fake-stripe-billing.ts keeps the objects and moves them through their
// lifecycle.

const DAY = 86_400;

/** Seconds between the fake's clock and the real one (see moveClockTo in fake-stripe-billing.ts). */
let clockOffset = 0;

export const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
export const now = () => Math.floor(Date.now() / 1000) + clockOffset;

/** Stripe's time is `at` from this moment on, and runs on from there; null: the real time again. */
export function moveClockTo(at: number | null) {
  clockOffset = at === null ? 0 : at - Math.floor(Date.now() / 1000);
}

export const list = <T>(data: T[], url: string) => ({
  object: 'list' as const,
  data,
  has_more: false as const,
  total_count: data.length,
  url,
});

/** `anchor` moved by `n` intervals; months keep the anchor's day, clamped to short months (Jan 31 → Feb 28). */
export function shiftPeriod(anchor: number, recurring: Pick<FakeRecurring, 'interval' | 'interval_count'>, n: number) {
  const steps = n * recurring.interval_count;
  if (recurring.interval === 'day') return anchor + steps * DAY;
  if (recurring.interval === 'week') return anchor + steps * 7 * DAY;
  const from = new Date(anchor * 1000);
  const month = from.getUTCMonth() + (recurring.interval === 'month' ? steps : steps * 12);
  const lastDay = new Date(Date.UTC(from.getUTCFullYear(), month + 1, 0)).getUTCDate();
  const day = Math.min(from.getUTCDate(), lastDay);
  return (
    Date.UTC(from.getUTCFullYear(), month, day, from.getUTCHours(), from.getUTCMinutes(), from.getUTCSeconds()) / 1000
  );
}

/** The end of the period starting at `start`: the next boundary counted from the anchor, as Stripe counts. */
export function periodEnd(anchor: number, recurring: FakeRecurring, start: number): number {
  let n = 1;
  while (shiftPeriod(anchor, recurring, n) <= start) n += 1;
  return shiftPeriod(anchor, recurring, n);
}

export function newCustomer(fields: Pick<FakeCustomer, 'email' | 'name' | 'description' | 'metadata'>): FakeCustomer {
  return {
    id: newId('cus'),
    object: 'customer',
    address: null,
    balance: 0,
    created: now(),
    currency: null,
    default_source: null,
    delinquent: false,
    invoice_prefix: randomBytes(4).toString('hex').toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    livemode: false,
    next_invoice_sequence: 1,
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
    ...fields,
  };
}

export function newProduct(fields: Pick<FakeProduct, 'name' | 'description' | 'metadata' | 'active'>): FakeProduct {
  const created = now();
  return {
    id: newId('prod'),
    object: 'product',
    created,
    default_price: null,
    images: [],
    livemode: false,
    marketing_features: [],
    package_dimensions: null,
    shippable: null,
    tax_code: null,
    type: 'service',
    updated: created,
    url: null,
    ...fields,
  };
}

export function newPrice(
  fields: Pick<
    FakePrice,
    'product' | 'unit_amount' | 'currency' | 'recurring' | 'metadata' | 'nickname' | 'lookup_key'
  >,
): FakePrice {
  return {
    id: newId('price'),
    object: 'price',
    active: true,
    billing_scheme: 'per_unit',
    created: now(),
    custom_unit_amount: null,
    livemode: false,
    tax_behavior: 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: fields.recurring ? 'recurring' : 'one_time',
    unit_amount_decimal: String(fields.unit_amount),
    ...fields,
  };
}

export function planOf(price: FakePrice): FakePlan {
  const recurring = price.recurring!;
  return {
    id: price.id,
    object: 'plan',
    active: price.active,
    amount: price.unit_amount,
    amount_decimal: price.unit_amount_decimal,
    billing_scheme: 'per_unit',
    created: price.created,
    currency: price.currency,
    interval: recurring.interval,
    interval_count: recurring.interval_count,
    livemode: false,
    metadata: price.metadata,
    meter: null,
    nickname: price.nickname,
    product: price.product,
    tiers_mode: null,
    transform_usage: null,
    trial_period_days: null,
    usage_type: 'licensed',
  };
}

export function newInvoiceItem(
  fields: Pick<FakeInvoiceItem, 'customer' | 'amount' | 'currency' | 'description' | 'metadata'>,
): FakeInvoiceItem {
  const date = now();
  return {
    id: newId('ii'),
    object: 'invoiceitem',
    date,
    discountable: true,
    discounts: [],
    invoice: null,
    livemode: false,
    parent: null,
    period: { start: date, end: date },
    pricing: null,
    proration: false,
    quantity: 1,
    tax_rates: [],
    test_clock: null,
    ...fields,
  };
}

/** A subscription whose items start their first period now; incomplete until its first invoice is paid. */
export function newSubscription(input: {
  customer: string;
  prices: FakePrice[];
  metadata: Metadata;
  billingMode: 'classic' | 'flexible';
  saveDefaultPaymentMethod: 'off' | 'on_subscription' | null;
}): FakeSubscription {
  const at = now();
  const subscriptionId = newId('sub');
  const items = input.prices.map((price): FakeSubscriptionItem => ({
    id: newId('si'),
    object: 'subscription_item',
    billing_thresholds: null,
    created: at,
    current_period_end: periodEnd(at, price.recurring!, at),
    current_period_start: at,
    current_trial: null,
    discounts: [],
    metadata: {},
    plan: planOf(price),
    price,
    quantity: 1,
    subscription: subscriptionId,
    tax_rates: [],
  }));
  return {
    id: subscriptionId,
    object: 'subscription',
    application: null,
    application_fee_percent: null,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null },
    billing_cycle_anchor: at,
    billing_cycle_anchor_config: null,
    billing_mode:
      input.billingMode === 'flexible'
        ? { type: 'flexible', flexible: { proration_discounts: 'included' } }
        : { type: 'classic', flexible: null },
    billing_thresholds: null,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_details: { comment: null, feedback: null, reason: null },
    collection_method: 'charge_automatically',
    created: at,
    currency: input.prices[0]!.currency,
    customer: input.customer,
    days_until_due: null,
    default_payment_method: null,
    default_source: null,
    description: null,
    discounts: [],
    ended_at: null,
    invoice_settings: { account_tax_ids: null, issuer: { type: 'self' } },
    items: list(items, `/v1/subscription_items?subscription=${subscriptionId}`),
    latest_invoice: null,
    livemode: false,
    metadata: input.metadata,
    next_pending_invoice_item_invoice: null,
    on_behalf_of: null,
    pause_collection: null,
    payment_settings: {
      payment_method_options: null,
      payment_method_types: null,
      save_default_payment_method: input.saveDefaultPaymentMethod,
    },
    pending_invoice_item_interval: null,
    pending_setup_intent: null,
    pending_update: null,
    schedule: null,
    start_date: at,
    status: 'incomplete',
    test_clock: null,
    transfer_data: null,
    trial_end: null,
    trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } },
    trial_start: null,
  };
}

export type InvoiceFields = Pick<
  FakeInvoice,
  'currency' | 'billing_reason' | 'auto_advance' | 'collection_method' | 'metadata' | 'due_date' | 'parent'
> &
  Partial<Pick<FakeInvoice, 'description' | 'period_start' | 'period_end'>>;

/** A draft invoice with no lines yet. */
export function newInvoice(customer: FakeCustomer, fields: InvoiceFields): FakeInvoice {
  const created = now();
  const invoiceId = newId('in');
  return {
    id: invoiceId,
    object: 'invoice',
    account_country: 'US',
    account_name: 'Fake Stripe',
    amount_due: 0,
    amount_overpaid: 0,
    amount_paid: 0,
    amount_remaining: 0,
    amount_shipping: 0,
    application: null,
    attempt_count: 0,
    attempted: false,
    automatic_tax: { disabled_reason: null, enabled: false, liability: null, provider: null, status: null },
    // Stripe finalizes a draft that advances on its own about an hour after making it.
    automatically_finalizes_at: fields.auto_advance ? created + 3600 : null,
    created,
    customer: customer.id,
    customer_email: customer.email,
    customer_name: customer.name,
    default_payment_method: null,
    description: null,
    discounts: [],
    effective_at: null,
    ending_balance: null,
    hosted_invoice_url: null,
    invoice_pdf: null,
    issuer: { type: 'self' },
    last_finalization_error: null,
    lines: list([], `/v1/invoices/${invoiceId}/lines`),
    livemode: false,
    next_payment_attempt: null,
    number: null,
    on_behalf_of: null,
    payment_settings: { default_mandate: null, payment_method_options: null, payment_method_types: null },
    period_end: created,
    period_start: created,
    post_payment_credit_notes_amount: 0,
    pre_payment_credit_notes_amount: 0,
    receipt_number: null,
    starting_balance: 0,
    statement_descriptor: null,
    status: 'draft',
    status_transitions: { finalized_at: null, marked_uncollectible_at: null, paid_at: null, voided_at: null },
    subtotal: 0,
    subtotal_excluding_tax: 0,
    test_clock: null,
    total: 0,
    total_discount_amounts: [],
    total_excluding_tax: 0,
    total_pretax_credit_amounts: [],
    total_taxes: [],
    webhooks_delivered_at: null,
    ...fields,
  };
}

const lineBase = (invoice: FakeInvoice, amount: number, currency: string) => ({
  id: newId('il'),
  object: 'line_item' as const,
  amount,
  currency,
  discount_amounts: [] as [],
  discounts: [] as [],
  invoice: invoice.id,
  livemode: false as const,
  pretax_credit_amounts: [] as [],
  subtotal: amount,
  taxes: [] as [],
});

/** The line billing a subscription item over its current period. */
export function subscriptionLine(
  invoice: FakeInvoice,
  item: FakeSubscriptionItem,
  productName: string,
): FakeInvoiceLine {
  const { price } = item;
  return {
    ...lineBase(invoice, price.unit_amount * item.quantity, price.currency),
    description: `${item.quantity} × ${productName}`,
    discountable: true,
    metadata: {},
    parent: {
      type: 'subscription_item_details',
      invoice_item_details: null,
      subscription_item_details: {
        invoice_item: null,
        proration: false,
        proration_details: { credited_items: null },
        subscription: item.subscription,
        subscription_item: item.id,
      },
    },
    period: { start: item.current_period_start, end: item.current_period_end },
    pricing: {
      type: 'price_details',
      price_details: { price: price.id, product: price.product },
      unit_amount_decimal: price.unit_amount_decimal,
    },
    quantity: item.quantity,
    quantity_decimal: String(item.quantity),
    subscription: item.subscription,
  };
}

/**
 * A proration line for a price change at `at`: `sign` -1 credits the unused rest of the period at
 * `item`'s price, +1 charges it at the new price. Stripe rounds each line to a whole cent.
 */
export function prorationLine(
  invoice: FakeInvoice,
  item: FakeSubscriptionItem,
  productName: string,
  at: number,
  sign: 1 | -1,
): FakeInvoiceLine {
  const { current_period_start: start, current_period_end: end } = item;
  // Without a test clock a period can start later than now: then all of it is left.
  const from = Math.max(at, start);
  const amount = sign * Math.round((item.price.unit_amount * item.quantity * (end - from)) / (end - start));
  const line = subscriptionLine(invoice, item, productName);
  line.parent.subscription_item_details!.proration = true;
  return {
    ...line,
    amount,
    subtotal: amount,
    description: `${sign < 0 ? 'Unused' : 'Remaining'} time on ${productName}`,
    period: { start: from, end },
  };
}

/** The line billing a one-off invoice item. */
export function itemLine(invoice: FakeInvoice, item: FakeInvoiceItem): FakeInvoiceLine {
  return {
    ...lineBase(invoice, item.amount, item.currency),
    description: item.description,
    discountable: item.discountable,
    metadata: item.metadata,
    parent: {
      type: 'invoice_item_details',
      invoice_item_details: {
        invoice_item: item.id,
        proration: false,
        proration_details: { credited_items: null },
        subscription: null,
      },
      subscription_item_details: null,
    },
    period: item.period,
    pricing: null,
    quantity: item.quantity,
    quantity_decimal: String(item.quantity),
    subscription: null,
  };
}
