import type { Config } from '@booking/config';
import type { Db, MembershipStatus } from '@booking/db';
import { isTerminalMembership, isUuid } from '@booking/domain';
import type Stripe from 'stripe';
import {
  ANY_TENANT,
  lockMembership,
  lockMembershipUnlessBusy,
  lockOrder,
  lockOrderUnlessBusy,
  type LockedMembership,
  type LockedOrder,
} from '../locks';
import { providerCall } from '../payments/provider-call';
import { applyInvoiceFailed, applyInvoicePaid } from './apply-invoice';
import { invoiceFacts, latestInvoiceOf, subscriptionEndedAt, type InvoiceFacts } from './billing-facts';
import { convergeMembership } from './converge-membership';
import { pendingRefunds, refundLateInvoices } from './late-money';

export type BillingDeps = { db: Db; config: Config; stripe: Stripe };

/** How the subscription is read: with its newest invoice and that invoice's payment, for the failure code. */
export const SUBSCRIPTION_EXPAND = ['latest_invoice.payments.data.payment.payment_intent'];

export function retrieveSubscription(stripe: Stripe, subscriptionId: string) {
  return stripe.subscriptions.retrieve(subscriptionId, { expand: SUBSCRIPTION_EXPAND });
}

export interface SyncInput {
  subscriptionId: string;
  /** The provider's notification, deduplicated insert-first in provider_events. */
  event?: { id: string; type: string; invoice?: Stripe.Invoice };
  /**
   * The subscription as the provider just answered (a cancel), with the moment the request was
   * sent (the answer is at least that new); read fresh otherwise.
   */
  read?: { subscription: Stripe.Subscription; at: Date };
  /** Jobs: leave a membership another transaction holds to that transaction. */
  unlessBusy?: boolean;
}

export interface SyncResult {
  membershipId: string | null;
  /** The status transition made, if any. */
  transition: MembershipStatus | null;
  /** False when a job found the membership busy. */
  done: boolean;
}

/** The card's decline code on the invoice's payment, when the read expanded it. */
function failureCodeOf(invoice: Stripe.Invoice | null): string | null {
  const intent = invoice?.payments?.data[0]?.payment?.payment_intent;
  if (!intent || typeof intent === 'string') return null;
  return intent.last_payment_error?.decline_code ?? intent.last_payment_error?.code ?? null;
}

/**
 * Finds the membership of a subscription: by the subscription id it stores, or, for a
 * notification that overtakes the purchase storing it, by the membership_id and tenant_id the
 * subscription's metadata names.
 */
async function membershipOf(db: Db, subscription: Stripe.Subscription) {
  const stored = await db.membership.findUnique({
    where: { stripeSubscriptionId: subscription.id },
    select: { id: true, orderId: true, status: true, createdAt: true },
  });
  if (stored) return stored;
  const { membership_id: membershipId, tenant_id: tenantId } = subscription.metadata ?? {};
  if (!membershipId || !isUuid(membershipId) || !tenantId || !isUuid(tenantId)) return null;
  return db.membership.findFirst({
    where: { id: membershipId, tenantId, stripeSubscriptionId: null, billing: 'recurring' },
    select: { id: true, orderId: true, status: true, createdAt: true },
  });
}

/**
 * Every paid invoice of an ended subscription, oldest first: read before its membership's end is
 * recorded, so that money it keeps is applied (and reported) before `membership.ended`, whichever
 * notification comes first. One page is plenty: a membership's subscription has few invoices
 * that matter, and the newest come first.
 */
async function paidInvoicesOf(stripe: Stripe, subscriptionId: string): Promise<InvoiceFacts[]> {
  const page = await providerCall(() =>
    stripe.invoices.list({ subscription: subscriptionId, status: 'paid', limit: 100 }),
  );
  const startOf = (facts: InvoiceFacts) => facts.periodStart?.getTime() ?? 0;
  return page.data
    .map((invoice) => ({ created: invoice.created, facts: invoiceFacts(invoice) }))
    .sort((a, b) => a.created - b.created || startOf(a.facts) - startOf(b.facts))
    .map(({ facts }) => facts);
}

/**
 * One convergence of a membership with its provider subscription, the same for every trigger (a
 * notification, the cancel request, the reconcile and grace jobs): read the subscription first,
 * outside any transaction (and, when it has ended and the membership has not, its paid
 * invoices); then in one transaction take the order and membership locks, apply the invoices as
 * facts (each once) and converge the status. Facts come first, judged by the times of the end
 * request and of the subscription's end, so money the membership keeps is recorded before an end
 * and money it cannot keep never is. A read older than one already converged (two notifications
 * overtaking each other) applies its facts but leaves the status to the newer read. Money that
 * could not be kept is refunded after the commit; a redelivery retries a refund that failed.
 */
export async function syncMembership(deps: BillingDeps, input: SyncInput): Promise<SyncResult> {
  // Taken before the request leaves: whatever the provider answers is at least this new.
  const readAt = input.read?.at ?? new Date();
  const subscription =
    input.read?.subscription ?? (await providerCall(() => retrieveSubscription(deps.stripe, input.subscriptionId)));
  const found = await membershipOf(deps.db, subscription);
  if (!found) return { membershipId: null, transition: null, done: true };
  const latestInvoice = latestInvoiceOf(subscription);
  const latest = latestInvoice && invoiceFacts(latestInvoice);
  const secretKey = deps.config.webhooks.secretKey;
  const endedAt = subscriptionEndedAt(subscription);
  // Only what was paid since the membership exists: an imported one's history is not news.
  const paidBeforeEnd =
    endedAt && !isTerminalMembership(found.status)
      ? (await paidInvoicesOf(deps.stripe, subscription.id)).filter(
          (invoice) => invoice.paidAt !== null && invoice.paidAt.getTime() >= found.createdAt.getTime() - 1000,
        )
      : [];

  const outcome = await deps.db.$transaction(async (tx) => {
    if (input.event) {
      const first = await tx.$executeRaw`
        INSERT INTO provider_events (id, type) VALUES (${input.event.id}, ${input.event.type}) ON CONFLICT (id) DO NOTHING`;
      if (first === 0) return { transition: null, done: true, refunds: await pendingRefunds(tx, found.id) };
    }
    let order: LockedOrder | undefined;
    let membership: LockedMembership | undefined;
    if (input.unlessBusy) {
      order = found.orderId ? await lockOrderUnlessBusy(tx, found.orderId) : undefined;
      if (found.orderId && !order) return { transition: null, done: false, refunds: [] };
      membership = await lockMembershipUnlessBusy(tx, found.id);
    } else {
      order = found.orderId ? await lockOrder(tx, ANY_TENANT, found.orderId) : undefined;
      membership = await lockMembership(tx, ANY_TENANT, found.id);
    }
    if (!membership) return { transition: null, done: false, refunds: [] };
    if (membership.stripeSubscriptionId === null) {
      await tx.membership.update({ where: { id: membership.id }, data: { stripeSubscriptionId: subscription.id } });
    }

    const reread = () =>
      tx.membership.findUniqueOrThrow({ where: { id: found.id }, include: { plan: { include: { benefits: true } } } });
    // The ended subscription's paid invoices oldest first (unless another transaction has
    // recorded the end meanwhile: then they count as learnt after it), then the newest invoice:
    // a notification's older copy of the same invoice is then stale.
    const facts: { invoice: InvoiceFacts; paid: boolean; failureCode: string | null }[] = [];
    if (!isTerminalMembership(membership.status)) {
      for (const invoice of paidBeforeEnd) facts.push({ invoice, paid: true, failureCode: null });
    }
    if (latest && latestInvoice) {
      const collecting = ['past_due', 'unpaid', 'paused'].includes(subscription.status);
      if (latest.status === 'paid') facts.push({ invoice: latest, paid: true, failureCode: null });
      else if (latest.status === 'open' && latest.attemptCount > 0 && collecting)
        facts.push({ invoice: latest, paid: false, failureCode: failureCodeOf(latestInvoice) });
    }
    const own = input.event?.invoice;
    if (own) {
      const ownFacts = invoiceFacts(own);
      const sameAsLatest = latest?.invoiceId === ownFacts.invoiceId;
      facts.push({
        invoice: ownFacts,
        paid: input.event!.type === 'invoice.paid',
        failureCode: sameAsLatest ? failureCodeOf(latestInvoice) : null,
      });
    }
    // Facts before the end: kept money counts towards paid_through and is reported before
    // membership.ended; late money is judged by the end's times, not by whether it is recorded yet.
    for (const fact of facts) {
      const current = await reread();
      if (fact.paid) await applyInvoicePaid(tx, current, order, fact.invoice, endedAt);
      else await applyInvoiceFailed(tx, current, fact.invoice, fact.failureCode, secretKey, endedAt !== null);
    }
    // A read taken before one already converged says less than it: the status stays. An end is
    // final at the provider, so a read that shows one is never too old.
    const newerConverged = membership.stripeSyncedAt !== null && membership.stripeSyncedAt.getTime() > readAt.getTime();
    if (newerConverged && !endedAt)
      return { transition: null, done: true, refunds: await pendingRefunds(tx, found.id) };
    const transition = await convergeMembership(
      tx,
      { graceDays: deps.config.memberships.paymentGraceDays, secretKey, readAt },
      await reread(),
      subscription,
      latest,
    );
    return { transition, done: true, refunds: await pendingRefunds(tx, found.id) };
  });

  if (outcome.refunds.length > 0) await refundLateInvoices(deps, outcome.refunds);
  return { membershipId: found.id, transition: outcome.transition, done: outcome.done };
}
