import type { MembershipStatus, Tx } from '@booking/db';
import { isTerminalMembership } from '@booking/domain';
import type Stripe from 'stripe';
import type { LockedMembership } from '../locks';
import { addDays } from '../membership-freezes/freeze-dates';
import { paysForPeriod, subscriptionEndedAt, subscriptionPeriod, type InvoiceFacts } from './billing-facts';
import { closeEndedMembership } from './close-ended-membership';
import { recordEnded, recordPastDue, recordPausedForPayment, type DueInvoice, type EndReason } from './billing-events';
import { endsOf, markLateInvoices } from './late-money';

/**
 * The membership status the provider's subscription calls for, or null for "leave it": an
 * incomplete first payment (the purchase owns it), a freeze (the freeze jobs own paused and
 * resumed subscriptions), and an unpaid purchase that expired (the unpaid-order job cancels it).
 */
export function targetStatus(
  membership: Pick<LockedMembership, 'status'>,
  subscription: Stripe.Subscription,
  latest: InvoiceFacts | null,
): MembershipStatus | null {
  if (subscriptionEndedAt(subscription)) {
    return membership.status === 'pending_payment' && subscription.status === 'incomplete_expired' ? null : 'ended';
  }
  if (membership.status === 'frozen') return null;
  switch (subscription.status) {
    case 'active':
    case 'trialing':
      return 'active';
    case 'past_due':
      // Retries exhausted while the account leaves the subscription past_due: paused as if unpaid.
      return latest && latest.status === 'open' && latest.attemptCount > 0 && latest.nextPaymentAttempt === null
        ? 'paused_for_payment'
        : 'past_due';
    case 'unpaid':
      return 'paused_for_payment';
    case 'paused':
      return subscription.status_details?.paused?.subscription?.type === 'pause_requested'
        ? null
        : 'paused_for_payment';
    default:
      return null;
  }
}

function endReason(membership: LockedMembership, subscription: Stripe.Subscription): EndReason {
  if (membership.endRequestedBy === 'member') return 'cancelled_by_member';
  if (membership.endRequestedBy === 'staff') return 'cancelled_by_staff';
  if (membership.status === 'paused_for_payment' || subscription.cancellation_details?.reason === 'payment_failed')
    return 'payment_failed';
  return 'provider';
}

/**
 * Whether the subscription's current period is paid for, as its newest invoice tells: that
 * invoice bills an earlier period (none bills this one), or it pays for this one from its start
 * and is paid or has nothing to pay (a trial). A renewed subscription stays `active` while its
 * renewal invoice is a draft (about an hour) and through its first payment attempt, and a past
 * due one turns `active` when a newer invoice is paid: an upgrade's, which bills from the change
 * and pays for no period. Until the renewal invoice is paid the period is not, and that paid
 * invoice moves the period itself (apply-invoice.ts), whichever is handled first.
 */
function periodPaidFor(period: { start: Date }, latest: InvoiceFacts | null): boolean {
  if (!latest || latest.periodStart === null || latest.periodStart.getTime() < period.start.getTime()) return true;
  const settled = latest.status === 'paid' || latest.amountDueCents === 0;
  return settled && paysForPeriod(latest) && latest.periodStart.getTime() <= period.start.getTime();
}

/** The open invoice a payment status is about: the provider's latest, or the newest one stored. */
async function dueInvoice(tx: Tx, membershipId: string, latest: InvoiceFacts | null): Promise<DueInvoice | null> {
  if (latest && latest.status === 'open') return latest;
  const stored = await tx.membershipInvoice.findFirst({
    where: { membershipId, status: 'open' },
    orderBy: [{ periodEnd: 'desc' }, { createdAt: 'desc' }],
  });
  // The pay link is a bearer link: never stored, so an invoice known only from our rows has none.
  return stored && { ...stored, invoiceId: stored.stripeInvoiceId, hostedInvoiceUrl: null };
}

/**
 * Brings a locked membership to what the re-read subscription says: status, cancel_at_period_end
 * and, while it is active, its current period once that is paid for. Each transition is taken
 * under the lock from the status read there, so its event is recorded once however many
 * notifications, requests and jobs converge at the same time; an ended, expired or cancelled
 * membership never changes.
 * Returns the transition made, if any.
 */
export async function convergeMembership(
  tx: Tx,
  deps: { graceDays: number; secretKey: string; readAt: Date },
  membership: LockedMembership,
  subscription: Stripe.Subscription,
  latest: InvoiceFacts | null,
): Promise<MembershipStatus | null> {
  const now = new Date();
  // When the subscription was last read (never moved back by an older read of an ended one).
  const stripeSyncedAt =
    membership.stripeSyncedAt && membership.stripeSyncedAt > deps.readAt ? membership.stripeSyncedAt : deps.readAt;
  if (isTerminalMembership(membership.status)) {
    await tx.membership.update({ where: { id: membership.id }, data: { stripeSyncedAt } });
    return null;
  }
  const target = targetStatus(membership, subscription, latest);
  const period = subscriptionPeriod(subscription);
  await tx.membership.update({
    where: { id: membership.id },
    data: { cancelAtPeriodEnd: subscription.cancel_at_period_end, stripeSyncedAt },
  });
  // An active subscription's current period, once it is paid for (unless the member is on the
  // way out, when a renewal would be given back; a kept one moves it as it is applied).
  if (target === 'active' && period && !membership.endRequestedAt && periodPaidFor(period, latest)) {
    await tx.$executeRaw`
      UPDATE memberships SET
        starts_at = COALESCE(starts_at, ${period.start}),
        period_start = CASE WHEN expires_at IS NULL OR ${period.end} > expires_at THEN ${period.start} ELSE period_start END,
        expires_at = GREATEST(expires_at, ${period.end})
      WHERE id = ${membership.id}::uuid`;
  }
  if (target === null || target === membership.status) return null;

  if (target === 'ended') {
    const endedAt = subscriptionEndedAt(subscription)!;
    await tx.membership.update({
      where: { id: membership.id },
      data: { status: 'ended', endedAt, endReason: endReason(membership, subscription), graceEndsAt: null },
    });
    await markLateInvoices(tx, { id: membership.id, ...endsOf(membership, endedAt) });
    const ended = await tx.membership.findUniqueOrThrow({ where: { id: membership.id } });
    await recordEnded(tx, ended, {
      reason: endReason(membership, subscription),
      endedAt,
      paidThrough: ended.expiresAt,
      actorKeyId: membership.endRequestedBy === 'staff' ? membership.endRequestedKeyId : null,
    });
    await closeEndedMembership(tx, ended, endedAt);
    return 'ended';
  }
  if (target === 'active') {
    await tx.membership.update({ where: { id: membership.id }, data: { status: 'active', graceEndsAt: null } });
    return 'active';
  }
  const due = await dueInvoice(tx, membership.id, latest);
  if (target === 'past_due') {
    await tx.membership.update({ where: { id: membership.id }, data: { status: 'past_due' } });
    if (due) await recordPastDue(tx, membership, due);
    return 'past_due';
  }
  const graceEndsAt = addDays(now, deps.graceDays);
  await tx.membership.update({ where: { id: membership.id }, data: { status: 'paused_for_payment', graceEndsAt } });
  if (due) await recordPausedForPayment(tx, membership, due, graceEndsAt, deps.secretKey);
  return 'paused_for_payment';
}
