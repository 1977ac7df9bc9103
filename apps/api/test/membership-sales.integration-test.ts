import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  clientIp,
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  seedTenant,
  signedPaymentSucceededEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  unreachableStripeUrl,
} from '@booking/test-kit';
import { cancelUnpaidOrders } from '../src/online-orders/cancel-unpaid-orders';

// Selling memberships on the real PostgreSQL and Redis with the fake Stripe: online purchases
// (a PaymentIntent for fixed-term plans, a subscription for recurring ones), activation by the
// payment exactly once, one live recurring membership per customer and plan, unpaid orders
// cancelled with their provider object first, late payments refunded, and sales at the till.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
});
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

const buyer = () => ({ email: `member-${randomUUID()}@example.com`, first_name: 'Ada', last_name: 'Lovelace' });
const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });

/** A plan made through the API, so a recurring one has its Stripe Price. */
async function plan(billing: 'fixed_term' | 'recurring', extra: Record<string, unknown> = {}, tenant = demo) {
  const res = await request(t.app)
    .post('/api/v1/membership-plans')
    .set('Authorization', bearer(tenant.api_keys.admin))
    .send({
      name: `Plan ${randomUUID().slice(0, 8)}`,
      billing,
      price_cents: billing === 'recurring' ? 3_900 : 15_000,
      currency: 'USD',
      ...(billing === 'recurring' ? { interval: 'month' } : { term_months: 12 }),
      ...extra,
    });
  expect(res.status).toBe(201);
  return res.body as { plan_id: string; price_cents: number; stripe_price_id: string | null };
}

const buy = (body: Record<string, unknown>, ip = clientIp(), key?: string, app = t.app) => {
  const req = request(app).post('/api/orders/memberships').set('X-Forwarded-For', ip);
  return (key ? req.set('Idempotency-Key', key) : req).send({ tenant: demo.tenant.slug, ...body });
};

type Purchase = {
  order_id: string;
  membership_id: string;
  customer_id: string;
  holder_customer_id: string;
  payment_intent_id: string | null;
  subscription_id: string | null;
  client_secret: string;
  order_token: string;
  manage_token: string;
  pay_by: string;
};

async function bought(planId: string, customer = buyer(), extra: Record<string, unknown> = {}): Promise<Purchase> {
  const res = await buy({ plan_id: planId, customer, ...extra });
  expect(res.status).toBe(201);
  return res.body as Purchase;
}

const pay = (intentId: string, eventId?: string) =>
  deliverStripeEvent(t, signedPaymentSucceededEvent(fake.succeed(intentId), { secret: TEST_WEBHOOK_SECRET, eventId }));

describe('buying a fixed-term membership online', () => {
  it('when a buyer buys for a holder and pays, then order.created, and one membership.activated starting at the payment for the term', async () => {
    const annual = await plan('fixed_term');
    const holder = { email: `holder-${randomUUID()}@example.com`, first_name: 'Byron' };
    const order = await bought(annual.plan_id, buyer(), { holder });
    expect(order.holder_customer_id).not.toBe(order.customer_id);
    expect(order.manage_token.length).toBeGreaterThan(20);

    const [created] = await events(order.order_id, 'order.created');
    expect(created!.data).toMatchObject({
      kind: 'membership',
      customer_id: order.customer_id,
      amount_cents: 15_000,
      currency: 'USD',
      payment_intent_id: order.payment_intent_id,
      subscription_id: null,
      wallet_id: null,
      membership_id: order.membership_id,
      plan_id: annual.plan_id,
      pay_by: order.pay_by,
    });
    expect(fake.intents.get(order.payment_intent_id!)!.metadata).toEqual({
      tenant_id: demo.tenant.id,
      order_id: order.order_id,
      membership_id: order.membership_id,
      purpose: 'membership',
    });
    const row = await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id }, include: { lines: true } });
    expect(row).toMatchObject({ kind: 'membership', channel: 'online', status: 'pending_payment', totalCents: 15_000 });
    expect(row.lines).toEqual([
      expect.objectContaining({ type: 'membership', planId: annual.plan_id, membershipId: order.membership_id }),
    ]);
    const pending = await request(t.app).get(`/api/orders/${order.order_id}`).set('X-Order-Token', order.order_token);
    expect(pending.body).toMatchObject({
      kind: 'membership',
      status: 'pending_payment',
      membership_id: order.membership_id,
      plan_id: annual.plan_id,
      wallet_id: null,
    });

    expect((await pay(order.payment_intent_id!)).status).toBe(200);
    const membership = await t.deps.db.membership.findUniqueOrThrow({ where: { id: order.membership_id } });
    expect(membership).toMatchObject({ status: 'active', source: 'online', orderId: order.order_id });
    const expected = new Date(membership.startsAt!);
    expected.setUTCMonth(expected.getUTCMonth() + 12);
    expect(membership.expiresAt!.getTime()).toBe(expected.getTime());
    expect(membership.periodStart).toEqual(membership.startsAt);
    const activated = await events(order.membership_id, 'membership.activated');
    expect(activated).toHaveLength(1);
    expect(activated[0]!.data).toMatchObject({
      membership_id: order.membership_id,
      plan_id: annual.plan_id,
      customer_id: order.customer_id,
      holder_customer_id: order.holder_customer_id,
      order_id: order.order_id,
      channel: 'online',
      starts_at: membership.startsAt!.toISOString(),
      expires_at: membership.expiresAt!.toISOString(),
      amount_cents: 15_000,
      currency: 'USD',
    });
    const paid = await request(t.app).get(`/api/orders/${order.order_id}`).set('X-Order-Token', order.order_token);
    expect(paid.body.status).toBe('paid');
  });

  it('when the payment is notified 20 times at once, with the same and other event ids, then one activation', async () => {
    const annual = await plan('fixed_term', { term_days: 30, term_months: undefined });
    const order = await bought(annual.plan_id);
    const intent = fake.succeed(order.payment_intent_id!);
    const same = signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET });
    const deliveries = Array.from({ length: 20 }, (_, i) =>
      i % 4 === 0 ? signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }) : same,
    );
    const answers = await Promise.all(deliveries.map((signed) => deliverStripeEvent(t, signed)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await events(order.membership_id, 'membership.activated')).toHaveLength(1);
    const membership = await t.deps.db.membership.findUniqueOrThrow({ where: { id: order.membership_id } });
    expect(membership.expiresAt!.getTime() - membership.startsAt!.getTime()).toBe(30 * 86_400_000);
    expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('paid');
  });

  it('when the buyer double-clicks with one Idempotency-Key, then one order; with two keys, two orders of a fixed-term plan', async () => {
    const annual = await plan('fixed_term');
    const ip = clientIp();
    const customer = buyer();
    const first = await buy({ plan_id: annual.plan_id, customer }, ip, 'buy-1');
    const again = await buy({ plan_id: annual.plan_id, customer }, ip, 'buy-1');
    expect(first.status).toBe(201);
    expect(again.body.order_id).toBe(first.body.order_id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const [concurrentA, concurrentB] = await Promise.all([
      buy({ plan_id: annual.plan_id, customer }, ip, 'buy-2'),
      buy({ plan_id: annual.plan_id, customer }, ip, 'buy-2'),
    ]);
    const statuses = [concurrentA.status, concurrentB.status].sort();
    expect(statuses[0]).toBe(201);
    expect([201, 409]).toContain(statuses[1]);
    if (statuses[1] === 201) expect(concurrentA.body.order_id).toBe(concurrentB.body.order_id);
    const other2 = await buy({ plan_id: annual.plan_id, customer }, ip, 'buy-3');
    expect(other2.status).toBe(201);
    expect(other2.body.order_id).not.toBe(first.body.order_id);
    const orders = await t.deps.db.order.count({ where: { customerId: first.body.customer_id, kind: 'membership' } });
    expect(orders).toBe(3);
  });

  it('when the plan is unknown, of another tenant or inactive, or the tenant unknown, then 404/409 with their codes and nothing is written', async () => {
    const foreign = await plan('fixed_term', {}, other);
    const inactive = await plan('fixed_term', { active: false });
    const customer = buyer();
    for (const [body, status, code] of [
      [{ plan_id: randomUUID() }, 404, 'membership_plan_not_found'],
      [{ plan_id: foreign.plan_id }, 404, 'membership_plan_not_found'],
      [{ plan_id: inactive.plan_id }, 409, 'plan_not_active'],
      [{ plan_id: inactive.plan_id, tenant: `nope-${randomUUID()}` }, 404, 'tenant_not_found'],
      [{ plan_id: 'not-a-uuid' }, 400, 'invalid_body'],
      [{ plan_id: inactive.plan_id, customer: { email: 'x@example.com' } }, 400, 'invalid_body'],
    ] as const) {
      const res = await buy({ customer, ...body });
      expect([res.status, res.body.error]).toEqual([status, code]);
    }
    expect(await t.deps.db.customer.count({ where: { email: customer.email } })).toBe(0);
  });

  it('when Stripe is unreachable, then 503, and the order and membership are cancelled without order.created', async () => {
    const annual = await plan('fixed_term');
    const broken = createTestApp(stripeEnv(await unreachableStripeUrl()));
    try {
      const res = await buy({ plan_id: annual.plan_id, customer: buyer() }, clientIp(), undefined, broken.app);
      expect(res.status).toBe(503);
    } finally {
      await broken.close();
    }
    const order = await t.deps.db.order.findFirstOrThrow({
      where: { tenantId: demo.tenant.id, lines: { some: { planId: annual.plan_id } } },
      include: { soldMemberships: true },
    });
    expect(order.status).toBe('cancelled');
    expect(order.soldMemberships.map((m) => m.status)).toEqual(['cancelled']);
    expect(await events(order.id, 'order.created')).toHaveLength(0);
  });

  it('when membership and top-up purchases come from one address, then they share the orders rate limit', async () => {
    const limited = createTestApp({ ...stripeEnv(fake.url), RATE_LIMIT_ORDERS_PER_MINUTE: '2' });
    try {
      const annual = await plan('fixed_term');
      const ip = clientIp();
      const topup = await request(limited.app)
        .post('/api/orders/wallet-topups')
        .set('X-Forwarded-For', ip)
        .send({ tenant: demo.tenant.slug, amount_cents: 500, currency: 'USD', customer: buyer() });
      expect(topup.status).toBe(201);
      const first = await buy({ plan_id: annual.plan_id, customer: buyer() }, ip, undefined, limited.app);
      const second = await buy({ plan_id: annual.plan_id, customer: buyer() }, ip, undefined, limited.app);
      expect([first.status, second.status, second.body.error]).toEqual([201, 429, 'rate_limited']);
    } finally {
      await limited.close();
    }
  });
});

describe('buying a recurring membership online', () => {
  it('when a buyer subscribes, then a Stripe customer and an incomplete subscription are made with keys from our ids, and order.created names it', async () => {
    const monthly = await plan('recurring');
    const before = Date.now();
    const order = await bought(monthly.plan_id);
    expect(order.payment_intent_id).toBeNull();
    const subscription = fake.billing.subscriptions.get(order.subscription_id!)!;
    expect(subscription.status).toBe('incomplete');
    expect(subscription.metadata).toEqual({
      tenant_id: demo.tenant.id,
      membership_id: order.membership_id,
      order_id: order.order_id,
    });
    const [create] = fake
      .requestsTo('POST', '/v1/subscriptions')
      .filter((r) => r.idempotencyKey === `order-${order.order_id}-subscription`);
    expect(create!.body).toMatchObject({
      payment_behavior: 'default_incomplete',
      payment_settings: { save_default_payment_method: 'on_subscription' },
      billing_mode: { type: 'flexible' },
      items: { 0: { price: monthly.stripe_price_id } },
    });
    const customer = await t.deps.db.customer.findUniqueOrThrow({ where: { id: order.customer_id } });
    expect(customer.stripeCustomerId).toBe(subscription.customer);
    expect(
      fake.requestsTo('POST', '/v1/customers').filter((r) => r.idempotencyKey === `customer-${order.customer_id}`),
    ).toHaveLength(1);
    const invoice = fake.billing.invoices.get(subscription.latest_invoice!)!;
    expect(order.client_secret).toMatch(/_secret_/);
    expect(invoice.status).toBe('open');

    const membership = await t.deps.db.membership.findUniqueOrThrow({ where: { id: order.membership_id } });
    expect(membership).toMatchObject({
      status: 'pending_payment',
      billing: 'recurring',
      stripeSubscriptionId: order.subscription_id,
      stripeCustomerId: subscription.customer,
      stripePriceId: monthly.stripe_price_id,
    });
    const orderRow = await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } });
    expect(orderRow.stripeSubscriptionId).toBe(order.subscription_id);
    // Stripe expires an incomplete subscription after 23 hours; the order waits ten minutes more.
    const window = new Date(order.pay_by).getTime() - before;
    expect(window).toBeGreaterThanOrEqual((23 * 60 + 10) * 60_000 - 1000);
    expect(window).toBeLessThan((23 * 60 + 11) * 60_000);
    const [created] = await events(order.order_id, 'order.created');
    expect(created!.data).toMatchObject({
      kind: 'membership',
      payment_intent_id: null,
      subscription_id: order.subscription_id,
      membership_id: order.membership_id,
      plan_id: monthly.plan_id,
    });
    expect(await events(order.membership_id, 'membership.activated')).toHaveLength(0);
  });

  it('when the customer buys the same recurring plan again, then 409 membership_exists naming only its status and order (no ids or pay link for an anonymous caller), and no second subscription', async () => {
    const monthly = await plan('recurring');
    const customer = buyer();
    const first = await bought(monthly.plan_id, customer);
    const subscriptionsBefore = fake.billing.subscriptions.size;
    const again = await buy({ plan_id: monthly.plan_id, customer });
    expect([again.status, again.body.error]).toEqual([409, 'membership_exists']);
    expect(again.body.detail).toEqual({ status: 'pending_payment', order_id: first.order_id });
    expect(fake.billing.subscriptions.size).toBe(subscriptionsBefore);
    // Another customer, or another plan, is not refused.
    expect((await buy({ plan_id: monthly.plan_id, customer: buyer() })).status).toBe(201);
  });

  it('when two purchases of one recurring plan by one customer race, then one subscription and one membership_exists', async () => {
    const monthly = await plan('recurring');
    const customer = buyer();
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => buy({ plan_id: monthly.plan_id, customer }, clientIp(), `race-${i}`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409]);
    const winner = answers.find((a) => a.status === 201)!.body as Purchase;
    for (const loser of answers.filter((a) => a.status === 409)) {
      expect(loser.body).toMatchObject({
        error: 'membership_exists',
        detail: { status: 'pending_payment', order_id: winner.order_id },
      });
    }
    const memberships = await t.deps.db.membership.findMany({ where: { planId: monthly.plan_id } });
    expect(memberships).toHaveLength(1);
    const subscriptions = [...fake.billing.subscriptions.values()].filter(
      (s) => s.metadata.membership_id === winner.membership_id || s.items.data[0]!.price.id === monthly.stripe_price_id,
    );
    expect(subscriptions).toHaveLength(1);
    expect(await events(winner.order_id, 'order.created')).toHaveLength(1);
  });

  it('when Stripe fails a recurring purchase, then the customer can buy the plan again at once', async () => {
    const monthly = await plan('recurring');
    const customer = buyer();
    const broken = createTestApp(stripeEnv(await unreachableStripeUrl()));
    try {
      const res = await buy({ plan_id: monthly.plan_id, customer }, clientIp(), undefined, broken.app);
      expect(res.status).toBe(503);
    } finally {
      await broken.close();
    }
    expect((await buy({ plan_id: monthly.plan_id, customer })).status).toBe(201);
  });
});

describe('unpaid membership orders', () => {
  const overdue = (orderId: string) =>
    t.deps.db.order.update({ where: { id: orderId }, data: { payBy: new Date(Date.now() - 1000) } });

  it('when a fixed-term order is unpaid past its window, then its PaymentIntent, order and membership are cancelled, order.cancelled once, and a late payment is refunded', async () => {
    const annual = await plan('fixed_term');
    const order = await bought(annual.plan_id);
    await overdue(order.order_id);
    const second = createTestApp(stripeEnv(fake.url));
    try {
      await Promise.all([
        cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe }),
        cancelUnpaidOrders({ db: second.deps.db, stripe: second.deps.stripe }),
      ]);
    } finally {
      await second.close();
    }
    expect(fake.intents.get(order.payment_intent_id!)!.status).toBe('canceled');
    expect(await events(order.order_id, 'order.cancelled')).toHaveLength(1);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: order.membership_id } })).status).toBe(
      'cancelled',
    );

    // The payment won the race at the provider: it is given back, never activating anything.
    const intent = fake.succeed(order.payment_intent_id!);
    const signed = signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET });
    await Promise.all([deliverStripeEvent(t, signed), deliverStripeEvent(t, signed)]);
    await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }));
    expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
    const row = await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } });
    expect(row).toMatchObject({ status: 'cancelled', reviewReason: 'paid_after_cancelled', refundedCents: 15_000 });
    expect(await events(order.order_id, 'refund.created')).toHaveLength(1);
    expect(await events(order.membership_id, 'membership.activated')).toHaveLength(0);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: order.membership_id } })).status).toBe(
      'cancelled',
    );
  });

  it('when a subscription order is unpaid past its window, then the subscription is cancelled at Stripe first, then the order and membership', async () => {
    const monthly = await plan('recurring');
    const order = await bought(monthly.plan_id);
    await overdue(order.order_id);
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    expect(fake.billing.subscriptions.get(order.subscription_id!)!.status).toBe('canceled');
    expect(fake.requestsTo('DELETE', `/v1/subscriptions/${order.subscription_id}`)).toHaveLength(1);
    expect(await events(order.order_id, 'order.cancelled')).toHaveLength(1);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: order.membership_id } })).status).toBe(
      'cancelled',
    );
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    expect(await events(order.order_id, 'order.cancelled')).toHaveLength(1);
    // The slot is free again: the customer may subscribe anew.
    const customer = await t.deps.db.customer.findUniqueOrThrow({ where: { id: order.customer_id } });
    expect(
      (await buy({ plan_id: monthly.plan_id, customer: { email: customer.email, first_name: 'Ada' } })).status,
    ).toBe(201);
  });

  it('when the first invoice was paid before the job ran, then the job leaves the subscription and the order alone', async () => {
    const monthly = await plan('recurring');
    const order = await bought(monthly.plan_id);
    fake.billing.payFirstInvoice(order.subscription_id!);
    await overdue(order.order_id);
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    expect(fake.billing.subscriptions.get(order.subscription_id!)!.status).toBe('active');
    expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('pending_payment');
    expect(await events(order.order_id, 'order.cancelled')).toHaveLength(0);
    // Its activation is the billing notifications' work; other files' jobs must not trip on it.
    await t.deps.db.order.update({ where: { id: order.order_id }, data: { payBy: new Date(Date.now() + 86_400_000) } });
  });

  it('when a subscription expired at Stripe, then the job cancels the order without asking Stripe to cancel', async () => {
    const monthly = await plan('recurring');
    const order = await bought(monthly.plan_id);
    fake.billing.expireIncomplete(order.subscription_id!);
    await overdue(order.order_id);
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    expect(fake.requestsTo('DELETE', `/v1/subscriptions/${order.subscription_id}`)).toHaveLength(0);
    expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('cancelled');
    expect(await events(order.order_id, 'order.cancelled')).toHaveLength(1);
  });
});

describe('selling a membership at the till', () => {
  const staff = (tenant = demo) => ({ Authorization: bearer(tenant.api_keys.staff) });
  let shiftId: string;

  beforeAll(async () => {
    const shift = await request(t.app).post('/api/pos/shifts/open').set(staff()).send({ starting_cash_cents: 0 });
    expect(shift.status).toBe(201);
    shiftId = shift.body.shift_id;
  });

  async function customer(tenantId = demo.tenant.id) {
    return t.deps.db.customer.create({
      data: { tenantId, email: `till-${randomUUID()}@example.com`, firstName: 'Till' },
    });
  }

  async function openWithMembership(planId: string, extra: Record<string, unknown> = {}) {
    const owner = await customer();
    const res = await request(t.app)
      .post('/api/pos/orders')
      .set(staff())
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [
          { type: 'product', description: 'Towel', quantity: 1, unit_price_cents: 500 },
          { type: 'membership', plan_id: planId, customer_id: owner.id, ...extra },
        ],
      });
    expect(res.status).toBe(201);
    const line = res.body.lines.find((l: { type: string }) => l.type === 'membership');
    return { order: res.body, owner, membershipId: line.membership_id as string, line };
  }

  it('when a till order with a membership line is paid and settled, then the membership is activated once (channel pos), however many tills settle at once', async () => {
    const annual = await plan('fixed_term');
    const { order, owner, membershipId, line } = await openWithMembership(annual.plan_id);
    expect(line).toMatchObject({ plan_id: annual.plan_id, unit_price_cents: 15_000, total_cents: 15_000 });
    expect(order.total_cents).toBe(15_500);
    const pending = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membershipId } });
    expect(pending).toMatchObject({
      status: 'pending_payment',
      source: 'pos',
      customerId: owner.id,
      orderId: order.order_id,
    });

    const tender = await request(t.app)
      .post(`/api/pos/orders/${order.order_id}/tenders`)
      .set(staff())
      .send({ type: 'cash', amount_cents: 15_500 });
    expect(tender.status).toBe(201);
    const settles = await Promise.all(
      [0, 1, 2].map(() => request(t.app).post(`/api/pos/orders/${order.order_id}/settle`).set(staff()).send({})),
    );
    expect(settles.map((s) => s.status).sort()).toEqual([200, 409, 409]);
    const activated = await events(membershipId, 'membership.activated');
    expect(activated).toHaveLength(1);
    const membership = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membershipId } });
    expect(membership.status).toBe('active');
    expect(activated[0]!.data).toMatchObject({
      channel: 'pos',
      order_id: order.order_id,
      amount_cents: 15_000,
      customer_id: owner.id,
      holder_customer_id: owner.id,
      expires_at: membership.expiresAt!.toISOString(),
    });
  });

  it('when a manager confirms the order unpaid, then 409 membership_unpaid; when it is voided, then the membership is cancelled and never activated', async () => {
    const annual = await plan('fixed_term');
    const { order, membershipId } = await openWithMembership(annual.plan_id);
    const unpaid = await request(t.app)
      .post(`/api/pos/orders/${order.order_id}/settle`)
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ unpaid: true });
    expect([unpaid.status, unpaid.body.error]).toEqual([409, 'membership_unpaid']);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membershipId } })).status).toBe(
      'pending_payment',
    );
    const voided = await request(t.app).post(`/api/pos/orders/${order.order_id}/void`).set(staff()).send();
    expect(voided.status).toBe(200);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membershipId } })).status).toBe('cancelled');
    expect(await events(membershipId, 'membership.activated')).toHaveLength(0);
  });

  it('when the line names a recurring plan, a plan or customer of another tenant, or an inactive plan, then the order is refused with their codes', async () => {
    const monthly = await plan('recurring');
    const foreign = await plan('fixed_term', {}, other);
    const inactive = await plan('fixed_term', { active: false });
    const annual = await plan('fixed_term');
    const owner = await customer();
    const stranger = await customer(other.tenant.id);
    for (const [line, status, code] of [
      [{ plan_id: monthly.plan_id, customer_id: owner.id }, 400, 'plan_invalid'],
      [{ plan_id: foreign.plan_id, customer_id: owner.id }, 404, 'membership_plan_not_found'],
      [{ plan_id: inactive.plan_id, customer_id: owner.id }, 409, 'plan_not_active'],
      [{ plan_id: annual.plan_id, customer_id: stranger.id }, 404, 'customer_not_found'],
      [{ plan_id: annual.plan_id, customer_id: owner.id, holder_customer_id: stranger.id }, 404, 'customer_not_found'],
      [{ plan_id: annual.plan_id }, 400, 'invalid_body'],
    ] as const) {
      const res = await request(t.app)
        .post('/api/pos/orders')
        .set(staff())
        .send({ shift_id: shiftId, currency: 'USD', lines: [{ type: 'membership', ...line }] });
      expect([res.status, res.body.error]).toEqual([status, code]);
    }
    expect(await t.deps.db.membership.count({ where: { planId: annual.plan_id } })).toBe(0);
  });
});
