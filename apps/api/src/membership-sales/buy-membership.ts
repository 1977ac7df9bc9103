import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import { Prisma, type Db, type Tx } from '@booking/db';
import { AppError, LIVE_MEMBERSHIP_STATUSES } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { signToken } from '@booking/signing';
import type Stripe from 'stripe';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import { ensurePlanPrice } from '../membership-plans/ensure-plan-price';
import { WITH_BENEFITS } from '../membership-plans/plan-view';
import { issueManageToken } from '../memberships/member-token';
import { providerCall } from '../payments/provider-call';
import type { MembershipPurchaseRequest, MembershipPurchaseResponse } from './sale-schemas';
import { ensureStripeCustomer } from './stripe-customer';
import { normaliseEmail } from '../customers/customer-email';

/** The PaymentIntent metadata `purpose` of a fixed-term membership's payment. */
export const MEMBERSHIP_PURPOSE = 'membership';

/**
 * How long a subscription order waits for its first invoice: Stripe expires an incomplete
 * subscription 23 hours after it was made; ten minutes more lets that happen (or the payment
 * land) before the unpaid-order job cancels the subscription itself.
 */
export const SUBSCRIPTION_PAY_MS = (23 * 60 + 10) * 60_000;

type Deps = { db: Db; config: Config; stripe: Stripe | null };
type Person = MembershipPurchaseRequest['customer'];

/**
 * An anonymous membership purchase: the buyer (and holder) as customers, an order awaiting
 * payment with one membership line, and the membership pending_payment. A fixed-term plan is
 * paid by a PaymentIntent (its success activates the membership); a recurring plan by a Stripe
 * Subscription created default_incomplete, whose first invoice the buyer pays (the billing
 * notifications activate it).
 *
 * As top-ups, in three steps so no lock waits on Stripe: the rows first (without an event), then
 * the provider objects with idempotency keys derived from our ids, then the ids stored and
 * order.created recorded. If Stripe fails, the order and membership are cancelled at once
 * without an event (nothing was offered to pay) and the answer is 502/503.
 *
 * One live recurring membership per customer and plan: a second purchase is 409
 * membership_exists (its status and order only); the partial unique index
 * memberships_one_live_recurring settles two purchases at once.
 */
export async function buyMembership(
  deps: Deps,
  request: MembershipPurchaseRequest,
): Promise<MembershipPurchaseResponse> {
  const { db, config, stripe } = deps;
  if (!stripe) throw new AppError('payments_not_configured', 'STRIPE_SECRET_KEY is not set');
  const tenant = await db.tenant.findFirst({ where: { slug: request.tenant, published: true }, select: { id: true } });
  if (!tenant) throw new AppError('tenant_not_found');
  const found = await db.membershipPlan.findFirst({
    where: { id: request.plan_id, tenantId: tenant.id },
    include: WITH_BENEFITS,
  });
  if (!found) throw new AppError('membership_plan_not_found');
  if (!found.active) throw new AppError('plan_not_active');
  // A plan whose Stripe set-up failed when it was created is completed here.
  const plan = await ensurePlanPrice(deps, found);
  const recurring = plan.billing === 'recurring';

  const orderId = randomUUID();
  const membershipId = randomUUID();
  const payBy = new Date(Date.now() + (recurring ? SUBSCRIPTION_PAY_MS : config.orders.payMinutes * 60_000));
  const written = await writeRows(db, { tenantId: tenant.id, plan, request, orderId, membershipId, payBy }).catch(
    async (error: unknown) => {
      // The only unique index the rows can break is memberships_one_live_recurring: another
      // purchase of the same plan by the same customer committed first.
      if (!recurring || !(error instanceof Prisma.PrismaClientKnownRequestError) || error.code !== 'P2002') throw error;
      const customer = await db.customer.findFirst({
        where: { tenantId: tenant.id, email: normaliseEmail(request.customer.email) },
      });
      const live = customer && (await liveRecurring(db, customer.id, plan.id));
      if (!live) throw error;
      return { exists: live };
    },
  );
  if ('exists' in written) throw membershipExists(written.exists);
  const { customerId, holderId } = written;

  let paymentIntentId: string | null = null;
  let subscriptionId: string | null = null;
  let stripeCustomerId: string | null = null;
  let clientSecret: string;
  try {
    if (recurring) {
      stripeCustomerId = await ensureStripeCustomer({ db, stripe }, customerId);
      const subscription = await providerCall(() =>
        stripe.subscriptions.create(
          {
            customer: stripeCustomerId!,
            items: [{ price: plan.stripePriceId! }],
            payment_behavior: 'default_incomplete',
            payment_settings: { save_default_payment_method: 'on_subscription' },
            billing_mode: { type: 'flexible' },
            metadata: { tenant_id: tenant.id, membership_id: membershipId, order_id: orderId },
            expand: ['latest_invoice.confirmation_secret'],
          },
          { idempotencyKey: `order-${orderId}-subscription` },
        ),
      );
      subscriptionId = subscription.id;
      const invoice = subscription.latest_invoice as Stripe.Invoice | null;
      clientSecret = invoice?.confirmation_secret?.client_secret ?? '';
    } else {
      const intent = await providerCall(() =>
        stripe.paymentIntents.create(
          {
            amount: plan.priceCents,
            currency: plan.currency.toLowerCase(),
            automatic_payment_methods: { enabled: true },
            metadata: {
              tenant_id: tenant.id,
              order_id: orderId,
              membership_id: membershipId,
              purpose: MEMBERSHIP_PURPOSE,
            },
          },
          { idempotencyKey: `order-${orderId}-payment-intent` },
        ),
      );
      paymentIntentId = intent.id;
      clientSecret = intent.client_secret!;
    }
  } catch (error) {
    await abandonUnoffered(db, orderId, membershipId);
    throw error;
  }

  await db.$transaction(async (tx) => {
    await tx.order.update({
      where: { id: orderId },
      data: { paymentIntentId, stripeSubscriptionId: subscriptionId },
    });
    await tx.membership.update({
      where: { id: membershipId },
      data: {
        stripeSubscriptionId: subscriptionId,
        stripeCustomerId,
        stripePriceId: recurring ? plan.stripePriceId : null,
      },
    });
    await recordEvent(tx, {
      tenantId: tenant.id,
      name: 'order.created',
      entityType: 'order',
      entityId: orderId,
      fields: {
        order_id: orderId,
        kind: 'membership',
        customer_id: customerId,
        amount_cents: plan.priceCents,
        currency: plan.currency,
        payment_intent_id: paymentIntentId,
        subscription_id: subscriptionId,
        wallet_id: null,
        membership_id: membershipId,
        plan_id: plan.id,
        pay_by: payBy.toISOString(),
      },
    });
  });

  return {
    order_id: orderId,
    membership_id: membershipId,
    plan_id: plan.id,
    billing: plan.billing,
    status: 'pending_payment',
    amount_cents: plan.priceCents,
    currency: plan.currency,
    customer_id: customerId,
    holder_customer_id: holderId,
    payment_intent_id: paymentIntentId,
    subscription_id: subscriptionId,
    client_secret: clientSecret,
    publishable_key: config.stripe.publishableKey,
    order_token: signToken(config.tokenSigningSecret, 'order', {
      subject: orderId,
      tenantId: tenant.id,
      ttlSeconds: config.bookingTokenTtlSeconds,
    }),
    manage_token: issueManageToken(config, { id: membershipId, tenantId: tenant.id, tokenVersion: 1 }),
    pay_by: payBy.toISOString(),
  };
}

/**
 * The buyer and holder as customers (in email order, so two purchases naming the same two
 * people lock them in the same order), then, unless the buyer already has a live membership of
 * a recurring plan, the order, its line and the membership.
 */
async function writeRows(
  db: Db,
  input: {
    tenantId: string;
    plan: { id: string; name: string; billing: 'fixed_term' | 'recurring'; priceCents: number; currency: string };
    request: MembershipPurchaseRequest;
    orderId: string;
    membershipId: string;
    payBy: Date;
  },
): Promise<{ customerId: string; holderId: string } | { exists: LiveMembership }> {
  const { tenantId, plan, request, orderId, membershipId, payBy } = input;
  return db.$transaction(async (tx) => {
    const people: [string, Person][] = [[normaliseEmail(request.customer.email), request.customer]];
    if (request.holder && normaliseEmail(request.holder.email) !== people[0]![0]) {
      people.push([normaliseEmail(request.holder.email), request.holder]);
    }
    const ids = new Map<string, string>();
    for (const [email, person] of [...people].sort(([a], [b]) => a.localeCompare(b))) {
      ids.set(email, await upsert(tx, tenantId, email, person));
    }
    const customerId = ids.get(people[0]![0])!;
    const holderId = ids.get(people[people.length - 1]![0])!;
    if (plan.billing === 'recurring') {
      const live = await liveRecurring(tx, customerId, plan.id);
      if (live) return { exists: live };
    }
    await tx.order.create({
      data: {
        id: orderId,
        tenantId,
        channel: 'online',
        kind: 'membership',
        status: 'pending_payment',
        customerId,
        currency: plan.currency,
        totalCents: plan.priceCents,
        payBy,
      },
    });
    await tx.membership.create({
      data: {
        id: membershipId,
        tenantId,
        planId: plan.id,
        billing: plan.billing,
        orderId,
        source: 'online',
        customerId,
        holderCustomerId: holderId,
        status: 'pending_payment',
        priceCents: plan.priceCents,
        currency: plan.currency,
      },
    });
    await tx.orderLine.create({
      data: {
        orderId,
        position: 0,
        type: 'membership',
        description: plan.name,
        quantity: 1,
        unitPriceCents: plan.priceCents,
        totalCents: plan.priceCents,
        planId: plan.id,
        membershipId,
      },
    });
    await tx.order.update({ where: { id: orderId }, data: { membershipId } });
    return { customerId, holderId };
  });
}

function upsert(tx: Tx, tenantId: string, email: string, person: Person): Promise<string> {
  return upsertBookingCustomer(
    tx,
    tenantId,
    email,
    { firstName: person.first_name, lastName: person.last_name, phone: person.phone },
    'order',
  );
}

type LiveMembership = { id: string; status: string; orderId: string | null };

/** The customer's live membership of a recurring plan, if any. */
function liveRecurring(db: Db | Tx, customerId: string, planId: string): Promise<LiveMembership | null> {
  return db.membership.findFirst({
    where: { customerId, planId, billing: 'recurring', status: { in: [...LIVE_MEMBERSHIP_STATUSES] } },
    select: { id: true, status: true, orderId: true },
  });
}

/**
 * 409 membership_exists for the live membership, saying only its status and its order. The
 * caller is anonymous: anyone who types the buyer's email could be asking, so neither the
 * membership nor Stripe's invoice page (a bearer link to the buyer's billing details) is shown.
 * The buyer pays the open one with what the first purchase answered: a retry with its
 * Idempotency-Key answers it again, client secret included.
 */
function membershipExists(live: LiveMembership): AppError {
  return new AppError('membership_exists', { status: live.status, order_id: live.orderId });
}

/**
 * Stripe failed before anything could be paid: the order and membership end here, without an
 * event (order.created was never recorded), so the buyer can simply try again.
 */
async function abandonUnoffered(db: Db, orderId: string, membershipId: string): Promise<void> {
  const now = new Date();
  await db.$transaction(async (tx) => {
    await tx.order.updateMany({
      where: { id: orderId, status: 'pending_payment' },
      data: { status: 'cancelled', cancelledAt: now },
    });
    await tx.membership.updateMany({
      where: { id: membershipId, status: 'pending_payment' },
      data: { status: 'cancelled', endedAt: now, endReason: 'provider_failed' },
    });
  });
}
