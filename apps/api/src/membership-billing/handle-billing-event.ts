import { isUuid } from '@booking/domain';
import type Stripe from 'stripe';
import { lockMembership } from '../locks';
import { applyInvoiceFailed, applyInvoicePaid } from './apply-invoice';
import { invoiceFacts, subscriptionOfInvoice } from './billing-facts';
import { pendingRefunds, refundLateInvoices } from './late-money';
import { syncMembership, type BillingDeps } from './sync-membership';

/** The Stripe notifications recurring billing handles. */
const BILLING_EVENT_TYPES = new Set<string>([
  'invoice.paid',
  'invoice.payment_failed',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'customer.subscription.paused',
  'customer.subscription.resumed',
]);

export type BillingEvent = Extract<
  Stripe.Event,
  {
    type:
      | 'invoice.paid'
      | 'invoice.payment_failed'
      | 'customer.subscription.updated'
      | 'customer.subscription.deleted'
      | 'customer.subscription.paused'
      | 'customer.subscription.resumed';
  }
>;

export function isMembershipBillingEvent(event: Stripe.Event): event is BillingEvent {
  return BILLING_EVENT_TYPES.has(event.type);
}

/**
 * A billing notification: whatever it says, the subscription is read again from the provider and
 * the membership converged to it (sync-membership.ts), with the notification's invoice applied
 * as a fact. Notifications about subscriptions that are not memberships are acknowledged and
 * ignored. A freeze fee invoice has no subscription: it names its membership in its metadata.
 */
export async function handleMembershipBillingEvent(deps: BillingDeps, event: BillingEvent): Promise<void> {
  const object = event.data.object;
  if (object.object === 'subscription') {
    if (!(await mayBeMembership(deps, object.id, object.metadata))) return;
    await syncMembership(deps, { subscriptionId: object.id, event: { id: event.id, type: event.type } });
    return;
  }
  const invoice = object;
  const subscriptionId = subscriptionOfInvoice(invoice);
  if (subscriptionId) {
    if (!(await mayBeMembership(deps, subscriptionId, invoice.parent?.subscription_details?.metadata ?? null))) return;
    await syncMembership(deps, { subscriptionId, event: { id: event.id, type: event.type, invoice } });
    return;
  }
  await handleStandaloneInvoice(deps, event.id, event.type, invoice);
}

/** Whether a subscription can be a membership's, before asking the provider about it. */
async function mayBeMembership(deps: BillingDeps, subscriptionId: string, metadata: Stripe.Metadata | null) {
  if (metadata?.membership_id && isUuid(metadata.membership_id)) return true;
  return (await deps.db.membership.count({ where: { stripeSubscriptionId: subscriptionId } })) > 0;
}

/** An invoice of the membership's customer outside the subscription: a freeze fee. */
async function handleStandaloneInvoice(deps: BillingDeps, eventId: string, type: string, invoice: Stripe.Invoice) {
  const { membership_id: membershipId, tenant_id: tenantId } = invoice.metadata ?? {};
  if (!membershipId || !isUuid(membershipId) || !tenantId || !isUuid(tenantId)) return;
  const facts = invoiceFacts(invoice);
  const refunds = await deps.db.$transaction(async (tx) => {
    const first = await tx.$executeRaw`
      INSERT INTO provider_events (id, type) VALUES (${eventId}, ${type}) ON CONFLICT (id) DO NOTHING`;
    const membership = await lockMembership(tx, { tenantId }, membershipId);
    if (!membership) return [];
    if (first > 0) {
      if (type === 'invoice.paid') await applyInvoicePaid(tx, membership, undefined, facts);
      else await applyInvoiceFailed(tx, membership, facts, null, deps.config.webhooks.secretKey);
    }
    return pendingRefunds(tx, membership.id);
  });
  if (refunds.length > 0) await refundLateInvoices(deps, refunds);
}
