import type { Db } from '@booking/db';
import Stripe from 'stripe';
import type { FakeStripe } from './fake-stripe';
import { seedMembership, seedMembershipPlan, type PlanOptions } from './memberships';

// A recurring membership exactly as the online purchase leaves it before the first invoice is
// paid: a plan on a Stripe price, the member's Stripe customer and an incomplete subscription in
// the fake Stripe (made through its HTTP API with the real SDK), the membership pending_payment
// with that subscription, and its online order pending_payment.

/** The real SDK pointed at the fake, as the app's own client is. */
export function fakeStripeClient(fake: Pick<FakeStripe, 'port'>): Stripe {
  return new Stripe('sk_test_x', { host: '127.0.0.1', port: fake.port, protocol: 'http', maxNetworkRetries: 0 });
}

export interface PendingRecurringMembership {
  planId: string;
  membershipId: string;
  orderId: string;
  customerId: string;
  subscriptionId: string;
  stripeCustomerId: string;
  priceId: string;
  /** The first invoice, open until the member pays it. */
  firstInvoiceId: string;
}

export async function pendingRecurringMembership(
  db: Db,
  fake: Pick<FakeStripe, 'port'>,
  tenantId: string,
  options: { priceCents?: number; currency?: string; plan?: PlanOptions } = {},
): Promise<PendingRecurringMembership> {
  const stripe = fakeStripeClient(fake);
  const priceCents = options.priceCents ?? 2_500;
  const currency = options.currency ?? 'EUR';
  const product = await stripe.products.create({ name: 'Monthly membership' });
  const price = await stripe.prices.create({
    product: product.id,
    unit_amount: priceCents,
    currency: currency.toLowerCase(),
    recurring: { interval: 'month' },
  });
  const plan = await seedMembershipPlan(db, tenantId, {
    ...options.plan,
    billing: 'recurring',
    priceCents,
    currency,
    stripePriceId: price.id,
  });
  const customer = await stripe.customers.create({ email: 'member@example.com' });
  const membership = await seedMembership(db, plan, {
    status: 'pending_payment',
    stripeSubscriptionId: null,
    stripeCustomerId: customer.id,
    expiresAt: null,
  });
  const subscription = await stripe.subscriptions.create({
    customer: customer.id,
    items: [{ price: price.id }],
    payment_behavior: 'default_incomplete',
    payment_settings: { save_default_payment_method: 'on_subscription' },
    billing_mode: { type: 'flexible' },
    metadata: { tenant_id: tenantId, membership_id: membership.id },
  });
  const order = await db.order.create({
    data: {
      tenantId,
      channel: 'online',
      kind: 'membership',
      status: 'pending_payment',
      customerId: membership.customerId,
      currency,
      totalCents: priceCents,
      stripeSubscriptionId: subscription.id,
      membershipId: membership.id,
      payBy: new Date(Date.now() + 23 * 3_600_000),
    },
  });
  await db.membership.update({
    where: { id: membership.id },
    data: { orderId: order.id, stripeSubscriptionId: subscription.id, startsAt: null },
  });
  return {
    planId: plan.id,
    membershipId: membership.id,
    orderId: order.id,
    customerId: membership.customerId,
    subscriptionId: subscription.id,
    stripeCustomerId: customer.id,
    priceId: price.id,
    firstInvoiceId:
      typeof subscription.latest_invoice === 'string' ? subscription.latest_invoice : subscription.latest_invoice!.id,
  };
}
