import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { signEvent, type FakePaymentIntent } from './fake-stripe';
import { freePort } from './ports';

// Refund notifications as Stripe sends them, signed with the SDK's helper (see signEvent), and
// an address where no Stripe answers.

/** A refund object as it appears in events: the fake's, or one made up with any status. */
export interface RefundObject {
  id: string;
  object: 'refund';
  status: 'pending' | 'succeeded' | 'failed' | 'canceled' | 'requires_action';
  amount: number;
  currency: string;
  payment_intent: string;
  metadata: Record<string, string>;
  reason?: string | null;
  created?: number;
}

const eventId = () => `evt_${randomBytes(12).toString('hex')}`;

function envelope<T extends string, O>(type: T, object: O, id: string | undefined) {
  return {
    id: id ?? eventId(),
    object: 'event' as const,
    api_version: Stripe.API_VERSION,
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** A signed `refund.updated` (or `refund.failed`) about one refund. */
export function signedRefundEvent(
  refund: RefundObject,
  options: { secret: string; type?: 'refund.updated' | 'refund.failed'; eventId?: string },
) {
  return signEvent(envelope(options.type ?? 'refund.updated', refund, options.eventId), options);
}

/** A signed `charge.refunded` for the intent's charge, listing its refunds as older API versions do. */
export function signedChargeRefundedEvent(
  intent: FakePaymentIntent,
  refunds: RefundObject[],
  options: { secret: string; eventId?: string },
) {
  const refunded = refunds.filter((r) => r.status === 'succeeded').reduce((sum, r) => sum + r.amount, 0);
  const charge = {
    id: `ch_${intent.id.slice(3)}`,
    object: 'charge',
    amount: intent.amount,
    amount_refunded: refunded,
    currency: intent.currency,
    payment_intent: intent.id,
    refunded: refunded >= intent.amount,
    status: 'succeeded',
    metadata: intent.metadata,
    refunds: { object: 'list', data: refunds, has_more: false, url: `/v1/charges/ch_${intent.id.slice(3)}/refunds` },
  };
  return signEvent(envelope('charge.refunded', charge, options.eventId), options);
}

/**
 * A signed `charge.dispute.created`: the payer disputed `amount` of the payment with their bank.
 * Pass `disputeId` to notify the same dispute again under another event id, as Stripe may.
 */
export function signedDisputeCreatedEvent(
  intent: FakePaymentIntent,
  amount: number,
  options: { secret: string; eventId?: string; disputeId?: string },
) {
  const dispute = {
    id: options.disputeId ?? `dp_${randomBytes(12).toString('hex')}`,
    object: 'dispute',
    amount,
    currency: intent.currency,
    charge: `ch_${intent.id.slice(3)}`,
    payment_intent: intent.id,
    reason: 'fraudulent',
    status: 'needs_response',
    metadata: {},
    created: Math.floor(Date.now() / 1000),
  };
  return signEvent(envelope('charge.dispute.created', dispute, options.eventId), options);
}

/** `http://127.0.0.1:<port>` of a port nothing listens on: every call fails to connect. */
export async function unreachableStripeUrl(): Promise<string> {
  return `http://127.0.0.1:${await freePort()}`;
}
