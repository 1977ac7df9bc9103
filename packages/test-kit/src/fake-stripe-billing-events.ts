import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { signEvent } from './fake-stripe';
import type { FakeInvoice, FakeSubscription } from './fake-stripe-billing-types';

// Stripe Billing notifications as Stripe sends them, signed with the SDK's helper (see signEvent).
// Each carries a copy of its object as it was when the event was made: deliver it late and it
// says what was true then, not now, as Stripe's own late or retried deliveries do.

/** The object each event type carries. */
export interface BillingEventObjects {
  'invoice.created': FakeInvoice;
  'invoice.finalized': FakeInvoice;
  'invoice.paid': FakeInvoice;
  'invoice.payment_succeeded': FakeInvoice;
  'invoice.payment_failed': FakeInvoice;
  'invoice.voided': FakeInvoice;
  'customer.subscription.created': FakeSubscription;
  'customer.subscription.updated': FakeSubscription;
  'customer.subscription.deleted': FakeSubscription;
  'customer.subscription.paused': FakeSubscription;
  'customer.subscription.resumed': FakeSubscription;
  'customer.subscription.pending_update_applied': FakeSubscription;
  'customer.subscription.pending_update_expired': FakeSubscription;
}

export type BillingEventType = keyof BillingEventObjects;

/**
 * A signed billing event about `object` (a snapshot a control returned, or one of the fake's
 * objects, copied now). `previousAttributes` is the `data.previous_attributes` Stripe adds to
 * `*.updated` events: the changed fields' values before the change.
 */
export function signedBillingEvent<T extends BillingEventType>(
  type: T,
  object: BillingEventObjects[T],
  options: { secret: string; eventId?: string; previousAttributes?: Record<string, unknown>; timestamp?: number },
) {
  const data: { object: BillingEventObjects[T]; previous_attributes?: Record<string, unknown> } = {
    object: structuredClone(object),
  };
  if (options.previousAttributes) data.previous_attributes = structuredClone(options.previousAttributes);
  return signEvent(
    {
      id: options.eventId ?? `evt_${randomBytes(12).toString('hex')}`,
      object: 'event' as const,
      api_version: Stripe.API_VERSION,
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data,
    },
    options,
  );
}

export type SignedBillingEvent = ReturnType<typeof signedBillingEvent>;
