import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import type { LockedMembership } from '../locks';
import { membershipRef } from '../memberships/membership-ref';
import { announceRequested } from './change-events';

/**
 * How far before the invoice's period start a `period_end` change may say it takes effect and
 * still be the change the invoice pays: the provider's renewal and our stored end of period can
 * differ by a few seconds, never by days.
 */
const PERIOD_START_TOLERANCE_MS = 60 * 60 * 1000;

/**
 * Applies the membership's pending plan or price change that a paid invoice billed: the renewal
 * invoice at the new price (a `period_end` change, once its effective time has come) or the
 * proration invoice of an upgrade made `now`. Called by `invoice.paid` with the membership
 * locked, in the same transaction; an invoice at any other price changes nothing here.
 * A plan change records `membership.plan_changed`; a price change applies silently (its
 * `membership.price_change_scheduled` said everything ahead of time).
 */
export async function applyPaidChange(
  tx: Tx,
  membership: LockedMembership,
  invoice: { invoiceId: string; priceId: string | null; periodStart: Date; amountCents: number },
): Promise<void> {
  if (invoice.priceId === null) return;
  const change = await tx.membershipChange.findFirst({
    where: { membershipId: membership.id, status: 'pending', toPriceId: invoice.priceId },
  });
  if (!change) return;
  if (
    change.timing === 'period_end' &&
    change.effectiveAt.getTime() > invoice.periodStart.getTime() + PERIOD_START_TOLERANCE_MS
  ) {
    return;
  }
  // A quick invoice may be notified before the request has recorded the change as requested.
  await announceRequested(tx, membership, change);
  const now = new Date();
  const claimed = await tx.membershipChange.updateMany({
    where: { id: change.id, status: 'pending' },
    data: { status: 'applied', resolvedAt: now, invoiceId: invoice.invoiceId },
  });
  if (claimed.count === 0) return;
  const updated = await tx.membership.update({
    where: { id: membership.id },
    data: {
      ...(change.kind === 'plan_change' ? { planId: change.toPlanId } : {}),
      priceCents: change.toPriceCents,
      stripePriceId: change.toPriceId,
    },
  });
  if (change.kind !== 'plan_change') return;
  await recordEvent(tx, {
    tenantId: membership.tenantId,
    name: 'membership.plan_changed',
    entityType: 'membership',
    entityId: membership.id,
    fields: {
      ...membershipRef(updated),
      change_id: change.id,
      from_plan_id: change.fromPlanId,
      to_plan_id: change.toPlanId,
      invoice_id: invoice.invoiceId,
      amount_cents: invoice.amountCents,
      effective_at: (change.timing === 'now' ? now : change.effectiveAt).toISOString(),
    },
  });
}
