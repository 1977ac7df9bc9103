import type { Membership, MembershipFreeze } from '@booking/db';
import { AppError } from '@booking/domain';
import type Stripe from 'stripe';
import { isAlreadyRefunded, providerCall } from '../payments/provider-call';
import { invoicePaymentIntent } from '../payments/stripe-ids';
import { dayOf } from './freeze-dates';

// The Stripe side of a recurring membership's freeze. Each call runs before the transaction that
// records it, with an idempotency key derived from the freeze, so a retry, a second job run or
// a staff cancellation racing the job ask Stripe once and all get the same answer.

type Subscribed = Pick<Membership, 'id' | 'tenantId' | 'stripeSubscriptionId' | 'stripeCustomerId' | 'currency'>;

/** How close to the renewal a period must start to count as that renewal (clocks, rounding). */
const RENEWAL_TOLERANCE_MS = 60 * 60_000;

function subscriptionOf(membership: Subscribed): string {
  if (!membership.stripeSubscriptionId) throw new Error(`membership ${membership.id} has no subscription`);
  return membership.stripeSubscriptionId;
}

export function requireStripe(stripe: Stripe | null): Stripe {
  if (!stripe) throw new AppError('payments_not_configured');
  return stripe;
}

/**
 * Pauses the subscription for the freeze: no invoices and no new periods until it resumes, and,
 * the freeze starting on the renewal date, no credit for the unused time of the period (there is
 * next to none, and a credit would land on the freeze fee's invoice).
 */
export async function pauseForFreeze(stripe: Stripe, membership: Subscribed, freeze: Pick<MembershipFreeze, 'id'>) {
  return providerCall(() =>
    stripe.subscriptions.pause(
      subscriptionOf(membership),
      { type: 'subscription', bill_for: { unused_time_from: { type: 'none' } } },
      { idempotencyKey: `freeze-pause-${freeze.id}` },
    ),
  );
}

/**
 * Bills the freeze fee: an invoice item and an invoice that takes it, finalized now so Stripe
 * collects it from the member's saved card. Both name the membership and the freeze, which is how
 * the invoice.paid notification finds them. Returns the invoice id.
 */
export async function billFreezeFee(
  stripe: Stripe,
  membership: Subscribed,
  freeze: Pick<MembershipFreeze, 'id'> & { feeCents: number },
): Promise<string> {
  if (!membership.stripeCustomerId) throw new Error(`membership ${membership.id} has no Stripe customer`);
  const customer = membership.stripeCustomerId;
  const currency = membership.currency.toLowerCase();
  const metadata = { tenant_id: membership.tenantId, membership_id: membership.id, freeze_id: freeze.id };
  const description = 'Membership freeze fee';
  await providerCall(() =>
    stripe.invoiceItems.create(
      { customer, amount: freeze.feeCents, currency, description, metadata },
      { idempotencyKey: `freeze-fee-item-${freeze.id}` },
    ),
  );
  const invoice = await providerCall(() =>
    stripe.invoices.create(
      {
        customer,
        currency,
        description,
        metadata,
        auto_advance: true,
        collection_method: 'charge_automatically',
        pending_invoice_items_behavior: 'include',
      },
      { idempotencyKey: `freeze-fee-invoice-${freeze.id}` },
    ),
  );
  if (invoice.status === 'draft') {
    await providerCall(() =>
      stripe.invoices.finalizeInvoice(invoice.id, {}, { idempotencyKey: `freeze-fee-finalize-${freeze.id}` }),
    );
  }
  return invoice.id;
}

/** The billing period a resumed subscription is in. */
export interface ResumedPeriod {
  start: Date;
  end: Date;
}

/**
 * Resumes the subscription at the end of a freeze with a new billing period from now, so the
 * renewal moves out by the days frozen. Returns that period, from the subscription item (periods
 * live on items in this API version). A subscription found already resumed (an earlier attempt
 * whose answer was lost) is read instead.
 */
export async function resumeAfterFreeze(
  stripe: Stripe,
  membership: Subscribed,
  freeze: Pick<MembershipFreeze, 'id'>,
): Promise<ResumedPeriod> {
  const subscriptionId = subscriptionOf(membership);
  let subscription: Stripe.Subscription;
  try {
    subscription = await providerCall(() =>
      stripe.subscriptions.resume(
        subscriptionId,
        { billing_cycle_anchor: { type: 'now' } },
        { idempotencyKey: `freeze-resume-${freeze.id}` },
      ),
    );
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'payment_provider_error') throw error;
    subscription = await providerCall(() => stripe.subscriptions.retrieve(subscriptionId));
    if (subscription.status === 'paused') throw error;
  }
  const item = subscription.items.data[0];
  if (!item) throw new AppError('payment_provider_error', { message: 'the subscription has no items' });
  return { start: new Date(item.current_period_start * 1000), end: new Date(item.current_period_end * 1000) };
}

/**
 * Whether Stripe has already renewed the subscription the freeze was to pause at its renewal:
 * its current period starts at (or about) that renewal. Pausing it then would freeze a period the
 * member has just been billed for, so the start job cancels the freeze. The renewal is judged by
 * what it cannot move: the start of the freeze's first day (a recurring freeze starts on the
 * renewal day), or expires_at if that is earlier. expires_at alone would not do: the renewal's own
 * notification moves it on to the next renewal, and a period that began at this one would then
 * look like the old one. A period that has not renewed began a whole interval (a month at least)
 * earlier, so the margin of the day's start cannot mistake it for the renewal.
 */
export async function renewedBeforeFreeze(
  stripe: Stripe,
  membership: Subscribed & Pick<Membership, 'expiresAt'>,
  freeze: Pick<MembershipFreeze, 'startsOn'>,
): Promise<boolean> {
  if (!membership.expiresAt) return false;
  const renewalAt = Math.min(membership.expiresAt.getTime(), dayOf(freeze.startsOn).getTime());
  const subscriptionId = subscriptionOf(membership);
  const subscription = await providerCall(() => stripe.subscriptions.retrieve(subscriptionId));
  const item = subscription.items.data[0];
  return !!item && item.current_period_start * 1000 >= renewalAt - RENEWAL_TOLERANCE_MS;
}

/**
 * Undoes the pause of a freeze that was cancelled before it started: resumes the subscription if
 * it is still paused at our request, with the key and the `billing_cycle_anchor: now` the end job
 * uses (a new period from now, billed now: see docs/memberships.md "Freezes"). Anything else (an
 * active, cancelled or ended subscription) is left alone. Returns whether it resumed.
 */
export async function resumeCancelledFreeze(
  stripe: Stripe,
  membership: Subscribed,
  freeze: Pick<MembershipFreeze, 'id'>,
): Promise<boolean> {
  const subscriptionId = subscriptionOf(membership);
  const subscription = await providerCall(() => stripe.subscriptions.retrieve(subscriptionId));
  if (subscription.status !== 'paused') return false;
  if (subscription.status_details?.paused?.subscription?.type !== 'pause_requested') return false;
  await resumeAfterFreeze(stripe, membership, freeze);
  return true;
}

/**
 * Takes back the fee of a freeze that was cancelled before it started: an open (or
 * uncollectible) invoice is voided, a paid one refunded in full; a void one needs nothing. Keyed
 * by the freeze, and a second full refund refused by Stripe counts as done, so it is safe to run
 * twice. A draft (Stripe finalizes it within the hour) or a payment racing the void throws, for a
 * later run to finish. Returns what was done.
 */
export async function takeBackFreezeFee(
  stripe: Stripe,
  freeze: Pick<MembershipFreeze, 'id'>,
  invoiceId: string,
): Promise<'voided' | 'refunded' | 'void'> {
  const invoice = await providerCall(() => stripe.invoices.retrieve(invoiceId, { expand: ['payments'] }));
  if (invoice.status === 'void') return 'void';
  if (invoice.status === 'open' || invoice.status === 'uncollectible') {
    await providerCall(() =>
      stripe.invoices.voidInvoice(invoiceId, {}, { idempotencyKey: `freeze-fee-void-${freeze.id}` }),
    );
    return 'voided';
  }
  if (invoice.status !== 'paid') throw new Error(`the freeze fee invoice ${invoiceId} is ${invoice.status}`);
  const paymentIntent = invoicePaymentIntent(invoice);
  if (!paymentIntent) throw new Error(`the paid freeze fee invoice ${invoiceId} names no payment`);
  try {
    await stripe.refunds.create(
      { payment_intent: paymentIntent, metadata: { invoice_id: invoiceId, freeze_id: freeze.id, automatic: 'true' } },
      { idempotencyKey: `freeze-fee-refund-${freeze.id}` },
    );
  } catch (error) {
    if (!isAlreadyRefunded(error)) throw error;
  }
  return 'refunded';
}
