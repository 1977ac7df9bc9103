import type { Tx } from '@booking/db';
import { isTerminalMembership } from '@booking/domain';
import type { LockedMembership, LockedOrder } from '../locks';
import { applyPaidChange } from '../membership-changes/apply-paid-change';
import { billsSubscription, paysForPeriod, type InvoiceFacts } from './billing-facts';
import {
  recordPaymentFailed,
  recordPaymentSucceeded,
  recordRenewed,
  recordSubscriptionStarted,
  type SucceededReason,
} from './billing-events';
import { endsOf, lateReason } from './late-money';

// Invoice facts, applied once per invoice (a paid invoice) or per attempt (a failed one), with
// the membership locked. They emit the money events; the membership's status is converged from
// the provider's subscription afterwards (converge-membership.ts), so the order notifications
// arrive in does not decide it.

function invoiceRow(membershipId: string, facts: InvoiceFacts) {
  return {
    membershipId,
    billingReason: facts.billingReason,
    status: facts.status,
    attemptCount: facts.attemptCount,
    amountDueCents: facts.amountDueCents,
    amountPaidCents: facts.amountPaidCents,
    currency: facts.currency,
    priceId: facts.priceId,
    periodStart: facts.periodStart,
    periodEnd: facts.periodEnd,
    paidAt: facts.paidAt,
  };
}

/**
 * A paid invoice: recorded open→paid once per invoice id. Money the membership cannot keep
 * (late-money.ts, judged from the end request and from `endedAt`, the end the provider reported
 * — pass the re-read subscription's when it has ended) is only marked for refund and emits
 * nothing. Kept money on a live membership moves the paid period on monotonically when the
 * invoice pays for one (not an upgrade's: paysForPeriod) and emits, by billing reason: the first
 * invoice `subscription_started` + `payment_succeeded{create}` (and pays the order); a renewal
 * `payment_succeeded{cycle}` + `renewed`; a change `payment_succeeded{update}`; a freeze fee
 * `payment_succeeded{freeze_fee}`. The sync applies invoices before it records an end, so kept
 * money comes before `membership.ended`. Kept money learnt only after the end was recorded (its
 * notification came later and the provider's read did not show it) is kept on the row and
 * reported by `payment_succeeded` alone: nothing renews or starts an ended membership, and its
 * dates stay as `membership.ended` reported them.
 * Returns whether it applied anything.
 */
export async function applyInvoicePaid(
  tx: Tx,
  membership: LockedMembership,
  order: LockedOrder | undefined,
  facts: InvoiceFacts,
  subscriptionEndedAt: Date | null = null,
): Promise<boolean> {
  const stored = await tx.membershipInvoice.findUnique({ where: { stripeInvoiceId: facts.invoiceId } });
  if (stored?.status === 'paid') return false;
  const create = facts.billingReason === 'subscription_create';
  const terminal = isTerminalMembership(membership.status);
  const ends = endsOf(membership, subscriptionEndedAt);
  const late =
    lateReason(ends, facts) ??
    // Ended with no time to judge by (none is expected): nothing can be kept.
    (terminal && !ends.endRequestedAt && !ends.endedAt ? `paid_after_${membership.status}` : null) ??
    (create && order?.status === 'cancelled' ? 'paid_after_order_cancelled' : null);
  const row = {
    ...invoiceRow(membership.id, facts),
    status: 'paid',
    attemptCount: Math.max(facts.attemptCount, stored?.attemptCount ?? 0),
    reviewReason: late,
  };
  await tx.membershipInvoice.upsert({
    where: { stripeInvoiceId: facts.invoiceId },
    create: { stripeInvoiceId: facts.invoiceId, ...row },
    update: row,
  });
  if (late) return true;
  if (create && order && order.status === 'pending_payment') {
    await tx.order.update({
      where: { id: order.id },
      data: { status: 'paid', paidCents: facts.amountPaidCents, paidAt: facts.paidAt ?? new Date() },
    });
  }
  if (terminal) {
    const reason = succeededReason(facts);
    if (reason) await recordPaymentSucceeded(tx, membership, facts, reason, facts.attemptCount > 1);
    return true;
  }

  const wasDue = membership.status === 'past_due' || membership.status === 'paused_for_payment';
  const recovered = facts.attemptCount > 1 || wasDue;
  const { periodStart, periodEnd } = facts;
  const subscriptionInvoice = billsSubscription(facts);
  // Only an invoice that pays for a period moves it: an upgrade's bills the rest of the current
  // period (from the change to its end), paid perhaps before the period's own invoice (the hour
  // Stripe waits to collect a renewal, or days past due), which may never be; and it must not
  // restart the allowance mid-period.
  if (paysForPeriod(facts) && periodStart && periodEnd) {
    // Monotonic: a late or repeated period never moves the paid-through date back, and only a
    // period ending later starts a new one.
    await tx.$executeRaw`
      UPDATE memberships SET
        starts_at = COALESCE(starts_at, ${periodStart}),
        period_start = CASE WHEN expires_at IS NULL OR ${periodEnd} > expires_at THEN ${periodStart} ELSE period_start END,
        expires_at = GREATEST(expires_at, ${periodEnd}),
        updated_at = now()
      WHERE id = ${membership.id}::uuid`;
  }
  // A payment brings a live membership back to active; the subscription's state has the last word.
  if (
    membership.status !== 'frozen' &&
    subscriptionInvoice &&
    (membership.status === 'pending_payment' ? create : wasDue)
  ) {
    await tx.membership.update({ where: { id: membership.id }, data: { status: 'active', graceEndsAt: null } });
  }

  if (create) {
    if (membership.orderId && facts.subscriptionId && periodStart && periodEnd) {
      await recordSubscriptionStarted(tx, membership, {
        orderId: membership.orderId,
        subscriptionId: facts.subscriptionId,
        invoice: facts,
        periodStart,
        periodEnd,
      });
    }
    await recordPaymentSucceeded(tx, membership, facts, 'create', false);
  } else if (facts.billingReason === 'subscription_cycle') {
    await recordPaymentSucceeded(tx, membership, facts, 'cycle', recovered);
    if (periodStart && periodEnd) await recordRenewed(tx, membership, facts, { start: periodStart, end: periodEnd });
  } else if (facts.billingReason === 'subscription_update') {
    await recordPaymentSucceeded(tx, membership, facts, 'update', recovered);
  } else if (facts.metadata.freeze_id) {
    await recordPaymentSucceeded(tx, membership, facts, 'freeze_fee', false);
  }
  if ((facts.billingReason === 'subscription_cycle' || facts.billingReason === 'subscription_update') && periodStart) {
    await applyPaidChange(tx, membership, {
      invoiceId: facts.invoiceId,
      priceId: facts.priceId,
      periodStart,
      amountCents: facts.amountPaidCents,
    });
  }
  return true;
}

function succeededReason(facts: InvoiceFacts): SucceededReason | null {
  if (facts.billingReason === 'subscription_create') return 'create';
  if (facts.billingReason === 'subscription_cycle') return 'cycle';
  if (facts.billingReason === 'subscription_update') return 'update';
  return facts.metadata.freeze_id ? 'freeze_fee' : null;
}

/**
 * A failed attempt: recorded when it is newer than the attempts stored and the invoice is not
 * paid (a stale failure changes and emits nothing). The first invoice's failures emit nothing
 * (the order stays pending until it is paid or abandoned), nor do failures of a membership that
 * has ended or whose subscription has (`subscriptionEnded`: the provider collects nothing more).
 * Others emit `payment_failed`, `final` when the provider will not try again.
 */
export async function applyInvoiceFailed(
  tx: Tx,
  membership: LockedMembership,
  facts: InvoiceFacts,
  failureCode: string | null,
  secretKey: string,
  subscriptionEnded = false,
): Promise<boolean> {
  const stored = await tx.membershipInvoice.findUnique({ where: { stripeInvoiceId: facts.invoiceId } });
  if (stored?.status === 'paid' || (stored && facts.attemptCount <= stored.attemptCount)) return false;
  if (facts.status === 'paid') return false;
  const row = invoiceRow(membership.id, facts);
  await tx.membershipInvoice.upsert({
    where: { stripeInvoiceId: facts.invoiceId },
    create: { stripeInvoiceId: facts.invoiceId, ...row },
    update: row,
  });
  if (facts.billingReason === 'subscription_create' || subscriptionEnded || isTerminalMembership(membership.status))
    return true;
  await recordPaymentFailed(tx, membership, facts, failureCode, secretKey);
  return true;
}
