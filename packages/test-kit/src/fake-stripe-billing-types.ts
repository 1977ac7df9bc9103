// The Stripe Billing objects the fake keeps, shaped as API version 2026-10-28 returns them (see the
// SDK's resources/*.d.ts): the fields an app reads, with Stripe's nulls where the fake has nothing
// to say. Ids of related objects stay ids unless a request expands them.

export type Metadata = Record<string, string>;

export interface FakeList<T> {
  object: 'list';
  data: T[];
  has_more: false;
  total_count: number;
  url: string;
}

export interface FakeCustomer {
  id: string;
  object: 'customer';
  address: null;
  balance: number;
  created: number;
  currency: string | null;
  default_source: null;
  delinquent: boolean;
  description: string | null;
  email: string | null;
  /** Prefix of the customer's invoice numbers (`ABCD1234-0001`). */
  invoice_prefix: string;
  invoice_settings: { custom_fields: null; default_payment_method: null; footer: null; rendering_options: null };
  livemode: false;
  metadata: Metadata;
  name: string | null;
  next_invoice_sequence: number;
  phone: null;
  preferred_locales: string[];
  shipping: null;
  tax_exempt: 'none';
  test_clock: null;
}

export interface FakeProduct {
  id: string;
  object: 'product';
  active: boolean;
  created: number;
  default_price: null;
  description: string | null;
  images: string[];
  livemode: false;
  marketing_features: [];
  metadata: Metadata;
  name: string;
  package_dimensions: null;
  shippable: null;
  tax_code: null;
  type: 'service';
  updated: number;
  url: null;
}

export type Interval = 'day' | 'week' | 'month' | 'year';

export interface FakeRecurring {
  interval: Interval;
  interval_count: number;
  meter: null;
  trial_period_days: null;
  usage_type: 'licensed';
}

export interface FakePrice {
  id: string;
  object: 'price';
  active: boolean;
  billing_scheme: 'per_unit';
  created: number;
  currency: string;
  custom_unit_amount: null;
  livemode: false;
  lookup_key: string | null;
  metadata: Metadata;
  nickname: string | null;
  product: string;
  recurring: FakeRecurring | null;
  tax_behavior: 'unspecified';
  tiers_mode: null;
  transform_quantity: null;
  type: 'one_time' | 'recurring';
  unit_amount: number;
  /** A decimal string on the wire; the SDK hands it to the app as a `Decimal`. */
  unit_amount_decimal: string;
}

/** The legacy view of a recurring price that subscription items still carry. */
export interface FakePlan {
  id: string;
  object: 'plan';
  active: boolean;
  amount: number;
  amount_decimal: string;
  billing_scheme: 'per_unit';
  created: number;
  currency: string;
  interval: Interval;
  interval_count: number;
  livemode: false;
  metadata: Metadata;
  meter: null;
  nickname: string | null;
  product: string;
  tiers_mode: null;
  transform_usage: null;
  trial_period_days: null;
  usage_type: 'licensed';
}

export interface FakeSubscriptionItem {
  id: string;
  object: 'subscription_item';
  billing_thresholds: null;
  created: number;
  /** In this API version the billing period lives on the item, not on the subscription. */
  current_period_end: number;
  current_period_start: number;
  current_trial: null;
  discounts: [];
  metadata: Metadata;
  plan: FakePlan;
  price: FakePrice;
  quantity: number;
  subscription: string;
  tax_rates: [];
}

export type SubscriptionStatus =
  'incomplete' | 'incomplete_expired' | 'active' | 'past_due' | 'unpaid' | 'canceled' | 'paused';

export interface FakeSubscription {
  id: string;
  object: 'subscription';
  application: null;
  application_fee_percent: null;
  automatic_tax: { disabled_reason: null; enabled: false; liability: null };
  billing_cycle_anchor: number;
  billing_cycle_anchor_config: null;
  billing_mode: { type: 'classic' | 'flexible'; flexible: { proration_discounts: 'included' } | null };
  billing_thresholds: null;
  cancel_at: number | null;
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  cancellation_details: {
    comment: null;
    feedback: null;
    reason: 'cancellation_requested' | 'payment_failed' | null;
  };
  collection_method: 'charge_automatically';
  created: number;
  currency: string;
  customer: string;
  days_until_due: null;
  default_payment_method: null;
  default_source: null;
  description: null;
  discounts: [];
  ended_at: number | null;
  invoice_settings: { account_tax_ids: null; issuer: { type: 'self' } };
  items: FakeList<FakeSubscriptionItem>;
  /** The id of the newest invoice; an invoice object only in an answer that expanded it. */
  latest_invoice: string | null;
  livemode: false;
  metadata: Metadata;
  next_pending_invoice_item_invoice: null;
  on_behalf_of: null;
  pause_collection: null;
  payment_settings: {
    payment_method_options: null;
    payment_method_types: null;
    save_default_payment_method: 'off' | 'on_subscription' | null;
  };
  pending_invoice_item_interval: null;
  pending_setup_intent: null;
  /**
   * Set while a price change made with proration_behavior=always_invoice and
   * payment_behavior=pending_if_incomplete waits for its invoice to be paid: the items as they
   * will be. Paying that invoice applies it; expirePendingUpdate drops it.
   */
  pending_update: {
    billing_cycle_anchor: null;
    cancel_at_period_end: null;
    discount: null;
    discounts: null;
    expires_at: number;
    metadata: null;
    subscription_items: FakeSubscriptionItem[];
    trial_end: null;
    trial_from_plan: null;
  } | null;
  schedule: null;
  start_date: number;
  status: SubscriptionStatus;
  /** Present while paused, saying why. */
  status_details?: {
    paused: { subscription: { type: 'pause_requested' }; transitioned_at: number; type: 'subscription' };
  };
  test_clock: null;
  transfer_data: null;
  trial_end: null;
  trial_settings: { end_behavior: { missing_payment_method: 'create_invoice' } };
  trial_start: null;
}

export type InvoiceStatus = 'draft' | 'open' | 'paid' | 'void' | 'uncollectible';

export type BillingReason = 'manual' | 'subscription_create' | 'subscription_cycle' | 'subscription_update';

export interface FakeInvoiceLine {
  id: string;
  object: 'line_item';
  amount: number;
  currency: string;
  description: string | null;
  discount_amounts: [];
  discountable: boolean;
  discounts: [];
  invoice: string;
  livemode: false;
  metadata: Metadata;
  parent:
    | {
        type: 'subscription_item_details';
        invoice_item_details: null;
        subscription_item_details: {
          invoice_item: null;
          /** True on the lines of a price change billed at once: the old price's unused time, the new one's rest. */
          proration: boolean;
          proration_details: { credited_items: null };
          subscription: string;
          subscription_item: string;
        };
      }
    | {
        type: 'invoice_item_details';
        invoice_item_details: {
          invoice_item: string;
          proration: false;
          proration_details: { credited_items: null };
          subscription: null;
        };
        subscription_item_details: null;
      };
  /** The service period this line pays for. */
  period: { start: number; end: number };
  pretax_credit_amounts: [];
  /** Which price the line bills: `pricing.price_details.price`. */
  pricing: {
    type: 'price_details';
    price_details: { price: string; product: string };
    unit_amount_decimal: string;
  } | null;
  quantity: number;
  quantity_decimal: string;
  subscription: string | null;
  subtotal: number;
  taxes: [];
}

export interface FakeInvoice {
  id: string;
  object: 'invoice';
  account_country: string;
  account_name: string;
  amount_due: number;
  amount_overpaid: number;
  amount_paid: number;
  amount_remaining: number;
  amount_shipping: number;
  application: null;
  /** Payment attempts so far, the customer's own confirmations included. */
  attempt_count: number;
  attempted: boolean;
  auto_advance: boolean;
  automatic_tax: { disabled_reason: null; enabled: false; liability: null; provider: null; status: null };
  automatically_finalizes_at: number | null;
  billing_reason: BillingReason;
  collection_method: 'charge_automatically' | 'send_invoice';
  created: number;
  currency: string;
  customer: string;
  customer_email: string | null;
  customer_name: string | null;
  default_payment_method: null;
  description: string | null;
  discounts: [];
  due_date: number | null;
  effective_at: number | null;
  ending_balance: number | null;
  hosted_invoice_url: string | null;
  invoice_pdf: string | null;
  issuer: { type: 'self' };
  /** Only for a failure to finalize; a failed payment is the PaymentIntent's `last_payment_error`. */
  last_finalization_error: null;
  lines: FakeList<FakeInvoiceLine>;
  livemode: false;
  metadata: Metadata;
  /** When Stripe will next try to collect it, or null when it will not (paid, final failure, collection stopped). */
  next_payment_attempt: number | null;
  number: string | null;
  on_behalf_of: null;
  parent: {
    type: 'subscription_details';
    quote_details: null;
    /** `metadata` is the subscription's metadata when the invoice was made. */
    subscription_details: { metadata: Metadata; subscription: string };
  } | null;
  payment_settings: { default_mandate: null; payment_method_options: null; payment_method_types: null };
  /**
   * As Stripe: the period pending items were gathered over. For a renewal that is the period just
   * ended; the period paid for is on the lines.
   */
  period_end: number;
  period_start: number;
  post_payment_credit_notes_amount: number;
  pre_payment_credit_notes_amount: number;
  receipt_number: null;
  starting_balance: number;
  statement_descriptor: null;
  status: InvoiceStatus;
  status_transitions: {
    finalized_at: number | null;
    marked_uncollectible_at: number | null;
    paid_at: number | null;
    voided_at: number | null;
  };
  subtotal: number;
  subtotal_excluding_tax: number;
  test_clock: null;
  total: number;
  total_discount_amounts: [];
  total_excluding_tax: number;
  total_pretax_credit_amounts: [];
  total_taxes: [];
  webhooks_delivered_at: number | null;
}

export interface FakeInvoiceItem {
  id: string;
  object: 'invoiceitem';
  amount: number;
  currency: string;
  customer: string;
  date: number;
  description: string | null;
  discountable: boolean;
  discounts: [];
  /** Null while pending: the next invoice made with pending_invoice_items_behavior=include takes it. */
  invoice: string | null;
  livemode: false;
  metadata: Metadata;
  parent: null;
  period: { start: number; end: number };
  pricing: null;
  proration: false;
  quantity: number;
  tax_rates: [];
  test_clock: null;
}

/** How a simulated payment attempt ends. */
export interface AttemptOutcome {
  outcome: 'paid' | 'failed';
  /** The last attempt Stripe's retry settings allow: nothing more is scheduled. */
  final?: boolean;
  /** What the account's settings do to the subscription after a final failure (default `unpaid`). */
  afterFinal?: 'unpaid' | 'canceled' | 'past_due';
  /** The card's decline code, on the invoice's PaymentIntent `last_payment_error` (default `generic_decline`). */
  declineCode?: string;
}

/** Snapshots of what a control changed, taken when it ran: sign events from them. */
export interface BillingChange {
  subscription: FakeSubscription;
  invoice: FakeInvoice;
}
