import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  clientIp,
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  keyIdOf,
  pendingRecurringMembership,
  seedTenant,
  signedBillingEvent,
  signedChargeRefundedEvent,
  signedDisputeCreatedEvent,
  signedPaymentSucceededEvent,
  signedRefundEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
} from '@booking/test-kit';

// Refunds of orders that sold a membership, on the real PostgreSQL and Redis with the fake
// Stripe: an online fixed-term order refunded by a manager (in full: the membership ends; in
// part: it is kept), refunds and disputes Stripe reports on its own, notifications delivered
// twice and refunds racing, recurring orders refused, and till orders whose refunds reach the
// membership line.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let managerKeyId: string;
let shiftId: string;

const as = (role: 'staff' | 'manager' | 'admin') => ({ Authorization: bearer(demo.api_keys[role]) });

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
  managerKeyId = await keyIdOf(t, demo.api_keys.manager);
  const shift = await request(t.app).post('/api/pos/shifts/open').set(as('staff')).send({ starting_cash_cents: 0 });
  expect(shift.status).toBe(201);
  shiftId = shift.body.shift_id;
});
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

const PRICE = 12_000;
const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });
const membershipOf = (id: string) => t.deps.db.membership.findUniqueOrThrow({ where: { id } });
const refund = (orderId: string, body: object) =>
  request(t.app).post(`/api/v1/orders/${orderId}/refunds`).set(as('manager')).send(body);

async function fixedTermPlan(): Promise<string> {
  const res = await request(t.app)
    .post('/api/v1/membership-plans')
    .set(as('admin'))
    .send({
      name: `Annual ${randomUUID().slice(0, 8)}`,
      billing: 'fixed_term',
      price_cents: PRICE,
      currency: 'USD',
      term_months: 12,
    });
  expect(res.status).toBe(201);
  return res.body.plan_id as string;
}

/** An online fixed-term membership, bought and paid: its order, membership and PaymentIntent. */
async function paidOnlineMembership() {
  const planId = await fixedTermPlan();
  const res = await request(t.app)
    .post('/api/orders/memberships')
    .set('X-Forwarded-For', clientIp())
    .send({
      tenant: demo.tenant.slug,
      plan_id: planId,
      customer: { email: `refund-member-${randomUUID()}@example.com`, first_name: 'Ada' },
    });
  expect(res.status).toBe(201);
  const intent = fake.succeed(res.body.payment_intent_id);
  expect(
    (await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }))).status,
  ).toBe(200);
  const membershipId = res.body.membership_id as string;
  expect((await membershipOf(membershipId)).status).toBe('active');
  return { orderId: res.body.order_id as string, membershipId, intent };
}

/** membership.ended recorded exactly once for the membership, with its reason and actor. */
async function endedOnce(membershipId: string, reason: string, actor: string | null) {
  const ended = await events(membershipId, 'membership.ended');
  expect(ended).toHaveLength(1);
  const membership = await membershipOf(membershipId);
  expect(membership).toMatchObject({ status: 'ended', endReason: reason });
  expect(ended[0]!.data).toMatchObject({
    membership_id: membershipId,
    reason,
    ended_at: membership.endedAt!.toISOString(),
    paid_through: membership.endedAt!.toISOString(),
    actor_user_id: actor,
  });
  return membership;
}

describe('refunding an online fixed-term membership order', () => {
  it('when a manager refunds part, then the membership is kept (goodwill); when the rest is refunded, then it ends once, with its booked freeze', async () => {
    const m = await paidOnlineMembership();
    const freeze = await t.deps.db.membershipFreeze.create({
      data: {
        membershipId: m.membershipId,
        startsOn: new Date(Date.now() + 30 * 86_400_000),
        endsOn: new Date(Date.now() + 40 * 86_400_000),
        status: 'booked',
        requestedBy: 'staff',
      },
    });

    const part = await refund(m.orderId, { amount_cents: 2_000, reason: 'goodwill' });
    expect(part.status).toBe(201);
    expect(part.body).toMatchObject({ status: 'succeeded', amount_cents: 2_000, debited_cents: 0 });
    expect((await membershipOf(m.membershipId)).status).toBe('active');
    expect(await events(m.membershipId, 'membership.ended')).toHaveLength(0);

    const rest = await refund(m.orderId, { amount_cents: PRICE - 2_000 });
    expect(rest.status).toBe(201);
    expect(rest.body.status).toBe('succeeded');
    expect(fake.refunds.filter((r) => r.payment_intent === m.intent.id).map((r) => r.amount)).toEqual([
      2_000,
      PRICE - 2_000,
    ]);
    const created = await events(m.orderId, 'refund.created');
    expect(created.map((e) => (e.data as { amount_cents: number }).amount_cents).sort((a, b) => a - b)).toEqual([
      2_000,
      PRICE - 2_000,
    ]);
    await endedOnce(m.membershipId, 'refunded', managerKeyId);
    expect((await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freeze.id } })).status).toBe('cancelled');
    const cancelled = await events(m.membershipId, 'membership.freeze_cancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.data).toMatchObject({ freeze_id: freeze.id, was: 'booked', reason: 'membership_ended' });

    const over = await refund(m.orderId, { amount_cents: 1 });
    expect([over.status, over.body.error, over.body.detail.refundable_cents]).toEqual([400, 'refund_exceeds_paid', 0]);
    const order = await request(t.app).get(`/api/v1/orders/${m.orderId}`).set(as('staff'));
    expect(order.body).toMatchObject({ refunded_cents: PRICE, membership_id: m.membershipId });
  });

  it('when two full refunds race, then Stripe is asked once, the other is refused, and the membership ends once', async () => {
    const m = await paidOnlineMembership();
    const answers = await Promise.all([0, 1, 2].map(() => refund(m.orderId, { amount_cents: PRICE })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 400, 400]);
    expect(answers.filter((a) => a.status === 400).map((a) => a.body.error)).toEqual([
      'refund_exceeds_paid',
      'refund_exceeds_paid',
    ]);
    const refunded = fake.refunds.filter((r) => r.payment_intent === m.intent.id);
    expect(refunded.reduce((sum, r) => sum + r.amount, 0)).toBe(PRICE);
    expect(await events(m.orderId, 'refund.created')).toHaveLength(1);
    await endedOnce(m.membershipId, 'refunded', managerKeyId);
  });

  it('when Stripe does not answer, then the membership stays active while pending, and the refund notification (delivered twice at once) ends it once', async () => {
    const m = await paidOnlineMembership();
    fake.failNextRefunds(3);
    const res = await refund(m.orderId, { amount_cents: PRICE });
    expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
    expect((await membershipOf(m.membershipId)).status).toBe('active');

    const made = await t.deps.stripe!.refunds.create({
      payment_intent: m.intent.id,
      amount: PRICE,
      metadata: { order_refund_id: res.body.detail.refund_id },
    });
    const notified = signedChargeRefundedEvent(m.intent, [made as never], { secret: TEST_WEBHOOK_SECRET });
    const again = signedRefundEvent(made as never, { secret: TEST_WEBHOOK_SECRET });
    const answers = await Promise.all([notified, notified, again].map((e) => deliverStripeEvent(t, e)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await events(m.orderId, 'refund.created')).toHaveLength(1);
    await endedOnce(m.membershipId, 'refunded', managerKeyId);
  });

  it('when Stripe refuses the refund, then 502 and the membership is kept', async () => {
    const m = await paidOnlineMembership();
    await t.deps.stripe!.refunds.create({ payment_intent: m.intent.id, amount: 1 });
    const res = await refund(m.orderId, { amount_cents: PRICE });
    expect([res.status, res.body.error]).toEqual([502, 'payment_provider_error']);
    expect((await membershipOf(m.membershipId)).status).toBe('active');
    expect(await events(m.membershipId, 'membership.ended')).toHaveLength(0);
  });
});

describe('refunds and disputes Stripe reports on its own', () => {
  it('when the whole payment is refunded in the dashboard and notified twice, by two event types, then one refund and one membership.ended without an actor', async () => {
    const m = await paidOnlineMembership();
    const made = await t.deps.stripe!.refunds.create({ payment_intent: m.intent.id });
    const charge = signedChargeRefundedEvent(m.intent, [made as never], { secret: TEST_WEBHOOK_SECRET });
    const updated = signedRefundEvent(made as never, { secret: TEST_WEBHOOK_SECRET });
    const answers = await Promise.all([charge, updated, charge].map((e) => deliverStripeEvent(t, e)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await events(m.orderId, 'refund.created')).toHaveLength(1);
    expect(await t.deps.db.orderRefund.count({ where: { orderId: m.orderId } })).toBe(1);
    await endedOnce(m.membershipId, 'refunded', null);
  });

  it('when part of the payment is refunded in the dashboard, then the membership is kept', async () => {
    const m = await paidOnlineMembership();
    const made = await t.deps.stripe!.refunds.create({ payment_intent: m.intent.id, amount: 500 });
    await deliverStripeEvent(t, signedChargeRefundedEvent(m.intent, [made as never], { secret: TEST_WEBHOOK_SECRET }));
    expect(await events(m.orderId, 'refund.created')).toHaveLength(1);
    expect((await membershipOf(m.membershipId)).status).toBe('active');
    expect(await events(m.membershipId, 'membership.ended')).toHaveLength(0);
  });

  it('when the payment is disputed (notified twice under two event ids), then the membership ends once with reason disputed, whatever the amount', async () => {
    const m = await paidOnlineMembership();
    const disputeId = `dp_${randomUUID().replaceAll('-', '')}`;
    const first = signedDisputeCreatedEvent(m.intent, 3_000, { secret: TEST_WEBHOOK_SECRET, disputeId });
    const second = signedDisputeCreatedEvent(m.intent, 3_000, { secret: TEST_WEBHOOK_SECRET, disputeId });
    const answers = await Promise.all([first, second, first].map((e) => deliverStripeEvent(t, e)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    await endedOnce(m.membershipId, 'disputed', null);
    expect(await t.deps.db.orderRefund.findMany({ where: { orderId: m.orderId } })).toEqual([
      expect.objectContaining({ source: 'dispute', amountCents: 3_000 }),
    ]);
  });

  it('when the membership was already refunded in full and the payment is then disputed, then nothing more happens', async () => {
    const m = await paidOnlineMembership();
    expect((await refund(m.orderId, { amount_cents: PRICE })).status).toBe(201);
    await deliverStripeEvent(t, signedDisputeCreatedEvent(m.intent, PRICE, { secret: TEST_WEBHOOK_SECRET }));
    await endedOnce(m.membershipId, 'refunded', managerKeyId);
    expect(await t.deps.db.orderRefund.count({ where: { orderId: m.orderId } })).toBe(1);
  });
});

describe('recurring membership orders', () => {
  it('when a manager refunds a subscription order (pending or paid), then 409 order_not_refundable pointing to the cancel route, and nothing is refunded', async () => {
    const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id);
    const pending = await refund(m.orderId, { amount_cents: 100 });
    expect([pending.status, pending.body.error]).toEqual([409, 'order_not_refundable']);
    expect(pending.body.detail.message).toContain(`POST /api/v1/memberships/${m.membershipId}/cancel`);

    const { invoice } = fake.billing.payFirstInvoice(m.subscriptionId);
    const paid = await deliverStripeEvent(
      t,
      signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET }),
    );
    expect(paid.status).toBe(200);
    expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: m.orderId } })).status).toBe('paid');
    const res = await refund(m.orderId, { amount_cents: 100 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      error: 'order_not_refundable',
      detail: { status: 'paid', membership_id: m.membershipId },
    });
    expect(res.body.detail.message).toContain(`POST /api/v1/memberships/${m.membershipId}/cancel`);
    expect(await t.deps.db.orderRefund.count({ where: { orderId: m.orderId } })).toBe(0);
    expect((await membershipOf(m.membershipId)).status).toBe('active');
  });
});

describe('till orders with a membership line', () => {
  const towel = { type: 'product', description: 'Towel', quantity: 1, unit_price_cents: 500 };

  /** A settled till order: a line of 500 (a towel) and the membership line, paid by the tenders given. */
  async function settledTillOrder(tenders: (orderId: string) => Promise<object[]>, first: object = towel) {
    const planId = await fixedTermPlan();
    const owner = await t.deps.db.customer.create({
      data: { tenantId: demo.tenant.id, email: `till-${randomUUID()}@example.com`, firstName: 'Till' },
    });
    const opened = await request(t.app)
      .post('/api/pos/orders')
      .set(as('staff'))
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [first, { type: 'membership', plan_id: planId, customer_id: owner.id }],
      });
    expect(opened.status).toBe(201);
    const orderId = opened.body.order_id as string;
    const membershipId = opened.body.lines.find((l: { type: string }) => l.type === 'membership')
      .membership_id as string;
    for (const body of await tenders(orderId)) {
      const added = await request(t.app).post(`/api/pos/orders/${orderId}/tenders`).set(as('staff')).send(body);
      expect(added.status).toBe(201);
    }
    const settled = await request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(as('staff')).send({});
    expect(settled.status).toBe(200);
    expect((await membershipOf(membershipId)).status).toBe('active');
    return { orderId, membershipId };
  }

  async function cardIntent(orderId: string, cents: number) {
    const created = await t.deps.stripe!.paymentIntents.create({
      amount: cents,
      currency: 'usd',
      metadata: { tenant_id: demo.tenant.id, purpose: 'pos_order', order_id: orderId },
    });
    return fake.succeed(created.id);
  }

  it('when cash refunds give back the other line, then the membership is kept; once they reach the membership line, then it ends once', async () => {
    const o = await settledTillOrder(async () => [{ type: 'cash', amount_cents: PRICE + 500 }]);
    const towel = await refund(o.orderId, { amount_cents: 500, shift_id: shiftId });
    expect(towel.status).toBe(201);
    expect((await membershipOf(o.membershipId)).status).toBe('active');
    const most = await refund(o.orderId, { amount_cents: PRICE - 1 });
    expect(most.status).toBe(201);
    expect((await membershipOf(o.membershipId)).status).toBe('active');
    expect(await events(o.membershipId, 'membership.ended')).toHaveLength(0);
    const last = await refund(o.orderId, { amount_cents: 1 });
    expect(last.status).toBe(201);
    await endedOnce(o.membershipId, 'refunded', managerKeyId);
  });

  it('when two card refunds of the whole order race, then one is made, and the membership ends once with its success', async () => {
    let intentId = '';
    const o = await settledTillOrder(async (orderId) => {
      const intent = await cardIntent(orderId, PRICE + 500);
      intentId = intent.id;
      return [{ type: 'card', amount_cents: PRICE + 500, payment_reference: intent.id }];
    });
    const answers = await Promise.all([0, 1].map(() => refund(o.orderId, { amount_cents: PRICE + 500 })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 400]);
    expect(fake.refunds.filter((r) => r.payment_intent === intentId).reduce((sum, r) => sum + r.amount, 0)).toBe(
      PRICE + 500,
    );
    expect(await events(o.orderId, 'refund.created')).toHaveLength(1);
    await endedOnce(o.membershipId, 'refunded', managerKeyId);
  });

  it('when the card payment is refunded in the dashboard after the towel was refunded in cash, notified twice, then the membership ends once', async () => {
    let intent: ReturnType<FakeStripe['succeed']> | undefined;
    const o = await settledTillOrder(async (orderId) => {
      intent = await cardIntent(orderId, PRICE);
      return [
        { type: 'cash', amount_cents: 500 },
        { type: 'card', amount_cents: PRICE, payment_reference: intent.id },
      ];
    });
    const order = await request(t.app).get(`/api/v1/orders/${o.orderId}`).set(as('staff'));
    const cashTender = order.body.tenders.find((x: { type: string }) => x.type === 'cash').tender_id as string;
    expect((await refund(o.orderId, { amount_cents: 500, tender_id: cashTender })).status).toBe(201);
    const made = await t.deps.stripe!.refunds.create({ payment_intent: intent!.id, amount: PRICE - 2_000 });
    const partial = signedChargeRefundedEvent(intent!, [made as never], { secret: TEST_WEBHOOK_SECRET });
    await Promise.all([partial, partial].map((e) => deliverStripeEvent(t, e)));
    expect((await membershipOf(o.membershipId)).status).toBe('active');

    const rest = await t.deps.stripe!.refunds.create({ payment_intent: intent!.id });
    const full = signedChargeRefundedEvent(intent!, [made as never, rest as never], { secret: TEST_WEBHOOK_SECRET });
    const answers = await Promise.all([full, full].map((e) => deliverStripeEvent(t, e)));
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await events(o.orderId, 'refund.created')).toHaveLength(2);
    await endedOnce(o.membershipId, 'refunded', null);
  });

  it('when the order also loaded a wallet, then a full refund (in cash, or by card) ends the membership and takes the load back', async () => {
    const customer = await t.deps.db.customer.create({
      data: { tenantId: demo.tenant.id, email: `load-${randomUUID()}@example.com`, firstName: 'Lo' },
    });
    const opened = await request(t.app)
      .post('/api/v1/wallets')
      .set(as('staff'))
      .send({ customer_id: customer.id, currency: 'USD' });
    expect(opened.status).toBe(201);
    const walletId = opened.body.wallet_id as string;
    const load = { type: 'wallet_load', wallet_id: walletId, amount_cents: 500 };

    const byCash = await settledTillOrder(async () => [{ type: 'cash', amount_cents: PRICE + 500 }], load);
    expect((await refund(byCash.orderId, { amount_cents: PRICE + 500 })).status).toBe(201);
    await endedOnce(byCash.membershipId, 'refunded', managerKeyId);

    const byCard = await settledTillOrder(async (orderId) => {
      const intent = await cardIntent(orderId, PRICE + 500);
      return [{ type: 'card', amount_cents: PRICE + 500, payment_reference: intent.id }];
    }, load);
    const res = await refund(byCard.orderId, { amount_cents: PRICE + 500 });
    expect([res.status, res.body.status, res.body.debited_cents]).toEqual([201, 'succeeded', 500]);
    await endedOnce(byCard.membershipId, 'refunded', managerKeyId);
    expect(await events(walletId, 'wallet.funding_returned')).toHaveLength(2);
    expect(await t.deps.db.wallet.findUniqueOrThrow({ where: { id: walletId } })).toMatchObject({
      balanceCents: 0,
      heldCents: 0,
    });
  });
});
