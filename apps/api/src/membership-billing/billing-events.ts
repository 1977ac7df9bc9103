import type { Membership, Tx } from '@booking/db';
import { recordEvent, type EventFields } from '@booking/events';
import { membershipRef } from '../memberships/membership-ref';
import type { InvoiceFacts } from './billing-facts';

// The recurring-billing events, each written in the transaction that applies its fact or
// transition (the caller holds the membership lock and has checked it happens once).

type Ref = Pick<Membership, 'id' | 'tenantId' | 'planId' | 'customerId' | 'holderCustomerId'>;

const iso = (date: Date) => date.toISOString();

function about(membership: Ref) {
  return { tenantId: membership.tenantId, entityType: 'membership' as const, entityId: membership.id };
}

export function recordSubscriptionStarted(
  tx: Tx,
  membership: Ref,
  fields: { orderId: string; subscriptionId: string; invoice: InvoiceFacts; periodStart: Date; periodEnd: Date },
) {
  return recordEvent(tx, {
    ...about(membership),
    name: 'membership.subscription_started',
    fields: {
      ...membershipRef(membership),
      order_id: fields.orderId,
      subscription_id: fields.subscriptionId,
      invoice_id: fields.invoice.invoiceId,
      amount_cents: fields.invoice.amountPaidCents,
      currency: fields.invoice.currency,
      period_start: iso(fields.periodStart),
      period_end: iso(fields.periodEnd),
    },
  });
}

export type SucceededReason = 'create' | 'cycle' | 'update' | 'freeze_fee';

export function recordPaymentSucceeded(
  tx: Tx,
  membership: Ref,
  invoice: InvoiceFacts,
  billingReason: SucceededReason,
  recovered: boolean,
) {
  return recordEvent(tx, {
    ...about(membership),
    name: 'membership.payment_succeeded',
    fields: {
      ...membershipRef(membership),
      invoice_id: invoice.invoiceId,
      billing_reason: billingReason,
      amount_cents: invoice.amountPaidCents,
      currency: invoice.currency,
      attempt_count: invoice.attemptCount,
      recovered,
    },
  });
}

export function recordRenewed(tx: Tx, membership: Ref, invoice: InvoiceFacts, period: { start: Date; end: Date }) {
  return recordEvent(tx, {
    ...about(membership),
    name: 'membership.renewed',
    fields: {
      ...membershipRef(membership),
      invoice_id: invoice.invoiceId,
      period_start: iso(period.start),
      period_end: iso(period.end),
      amount_cents: invoice.amountPaidCents,
      currency: invoice.currency,
    },
  });
}

export function recordPaymentFailed(
  tx: Tx,
  membership: Ref,
  invoice: InvoiceFacts,
  failureCode: string | null,
  secretKey: string,
) {
  return recordEvent(tx, {
    ...about(membership),
    name: 'membership.payment_failed',
    fields: {
      ...membershipRef(membership),
      invoice_id: invoice.invoiceId,
      amount_due_cents: invoice.amountDueCents,
      currency: invoice.currency,
      attempt_count: invoice.attemptCount,
      next_attempt_at: invoice.nextPaymentAttempt && iso(invoice.nextPaymentAttempt),
      final: invoice.nextPaymentAttempt === null,
      failure_code: failureCode,
    },
    secretFields: { hosted_invoice_url: invoice.hostedInvoiceUrl },
    secretKey,
  });
}

/** The invoice a payment status is about, as stored or as the provider last showed it. */
export interface DueInvoice {
  invoiceId: string;
  amountDueCents: number;
  currency: string;
  attemptCount: number;
  hostedInvoiceUrl: string | null;
}

export function recordPastDue(tx: Tx, membership: Ref, invoice: DueInvoice) {
  return recordEvent(tx, {
    ...about(membership),
    name: 'membership.past_due',
    fields: {
      ...membershipRef(membership),
      invoice_id: invoice.invoiceId,
      amount_due_cents: invoice.amountDueCents,
      currency: invoice.currency,
    },
  });
}

export function recordPausedForPayment(
  tx: Tx,
  membership: Ref,
  invoice: DueInvoice,
  graceEndsAt: Date,
  secretKey: string,
) {
  return recordEvent(tx, {
    ...about(membership),
    name: 'membership.paused_for_payment',
    fields: {
      ...membershipRef(membership),
      invoice_id: invoice.invoiceId,
      amount_due_cents: invoice.amountDueCents,
      currency: invoice.currency,
      attempt_count: invoice.attemptCount,
      grace_ends_at: iso(graceEndsAt),
    },
    secretFields: { hosted_invoice_url: invoice.hostedInvoiceUrl },
    secretKey,
  });
}

/** Why a membership ended: the reasons membership.ended can carry, from its payload schema. */
export type EndReason = EventFields<'membership.ended'>['reason'];

export function recordEnded(
  tx: Tx,
  membership: Ref,
  fields: { reason: EndReason; endedAt: Date; paidThrough: Date | null; actorKeyId: string | null },
) {
  return recordEvent(tx, {
    ...about(membership),
    name: 'membership.ended',
    fields: {
      ...membershipRef(membership),
      reason: fields.reason,
      ended_at: iso(fields.endedAt),
      paid_through: fields.paidThrough && iso(fields.paidThrough),
      actor_user_id: fields.actorKeyId,
    },
  });
}
