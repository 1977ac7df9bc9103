import type { Db, Membership } from '@booking/db';
import { AppError } from '@booking/domain';
import { freezeView } from '../membership-freezes/freeze-view';
import type { MembershipView } from './membership-schemas';

const iso = (date: Date | null) => date && date.toISOString();

/** The fields a membership shows in a list and in its own view. */
export function membershipSummary(m: Membership) {
  return {
    membership_id: m.id,
    plan_id: m.planId,
    billing: m.billing,
    status: m.status,
    source: m.source,
    external_ref: m.externalRef,
    order_id: m.orderId,
    customer_id: m.customerId,
    holder_customer_id: m.holderCustomerId,
    holder_photo_id: m.holderPhotoId,
    starts_at: iso(m.startsAt),
    expires_at: iso(m.expiresAt),
    price_cents: m.priceCents,
    currency: m.currency,
    subscription_id: m.stripeSubscriptionId,
    cancel_at_period_end: m.cancelAtPeriodEnd,
    end_requested_at: iso(m.endRequestedAt),
    ended_at: iso(m.endedAt),
    end_reason: m.endReason,
    grace_ends_at: iso(m.graceEndsAt),
    created_at: m.createdAt.toISOString(),
  };
}

/** A membership of the tenant with its uses, freezes, changes and invoices; 404 when it is not the tenant's. */
export async function loadMembershipView(db: Db, tenantId: string, membershipId: string): Promise<MembershipView> {
  const m = await db.membership.findFirst({
    where: { id: membershipId, tenantId },
    include: {
      usages: { orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], take: 200 },
      freezes: { orderBy: [{ startsOn: 'asc' }, { id: 'asc' }] },
      changes: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      invoices: { orderBy: [{ createdAt: 'asc' }, { stripeInvoiceId: 'asc' }] },
    },
  });
  if (!m) throw new AppError('membership_not_found');
  return {
    ...membershipSummary(m),
    usages: m.usages.map((u) => ({
      usage_id: u.id,
      kind: u.kind,
      status: u.status,
      quantity: u.quantity,
      period_key: u.periodKey,
      counts_at: iso(u.countsAt),
      benefit_id: u.benefitId,
      booking_id: u.bookingId,
      order_id: u.orderId,
      amount_cents: u.amountCents,
      actor_user_id: u.actorKeyId,
      created_at: u.createdAt.toISOString(),
      released_at: iso(u.releasedAt),
    })),
    freezes: m.freezes.map(freezeView),
    changes: m.changes.map((c) => ({
      change_id: c.id,
      kind: c.kind,
      status: c.status,
      when: c.timing,
      from_plan_id: c.fromPlanId,
      to_plan_id: c.toPlanId,
      from_price_cents: c.fromPriceCents,
      to_price_cents: c.toPriceCents,
      effective_at: c.effectiveAt.toISOString(),
      requested_by: c.requestedBy,
      invoice_id: c.invoiceId,
      created_at: c.createdAt.toISOString(),
      resolved_at: iso(c.resolvedAt),
    })),
    invoices: m.invoices.map((i) => ({
      invoice_id: i.stripeInvoiceId,
      billing_reason: i.billingReason,
      status: i.status,
      attempt_count: i.attemptCount,
      amount_due_cents: i.amountDueCents,
      amount_paid_cents: i.amountPaidCents,
      currency: i.currency,
      period_start: iso(i.periodStart),
      period_end: iso(i.periodEnd),
      paid_at: iso(i.paidAt),
      review_reason: i.reviewReason,
      refunded_at: iso(i.refundedAt),
    })),
  };
}
