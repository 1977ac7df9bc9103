import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  clientIp,
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  seedTenant,
  signedPaymentSucceededEvent,
  startStripeTestApp,
  stopStripeTestApp,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  walletTopUp,
} from '@booking/test-kit';
import { Queue } from 'bullmq';
import { LIFECYCLE_QUEUE } from '../src/jobs/lifecycle-queue';
import { cancelUnpaidOrders } from '../src/online-orders/cancel-unpaid-orders';

// Online wallet top-ups end to end on the real PostgreSQL and Redis, paid through the fake
// Stripe: the order, its payment funding the wallet exactly once, the unpaid-order job, and a
// late payment that is given back.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp({ RATE_LIMIT_ORDERS_PER_MINUTE: '3' }));
  demo = await seedTenant(t.deps);
});
afterAll(() => stopStripeTestApp(t, fake));

const buyer = () => ({ email: `buyer-${randomUUID()}@example.com`, first_name: 'Ada' });

const topUp = (amountCents = 5000, ip = clientIp(), customer = buyer()) =>
  walletTopUp(t, demo, amountCents, customer, ip);

const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });

describe('online wallet top-ups', () => {
  it('when a buyer tops up and pays, then order.created, then one wallet.funded with a lot that expires, and the buyer sees the order paid', async () => {
    const order = await topUp(5000);
    const [created] = await events(order.order_id, 'order.created');
    expect(created!.data).toMatchObject({
      order_id: order.order_id,
      kind: 'wallet_topup',
      customer_id: order.customer_id,
      amount_cents: 5000,
      currency: 'USD',
      payment_intent_id: order.payment_intent_id,
      wallet_id: order.wallet_id,
      pay_by: order.pay_by,
    });
    expect(fake.intents.get(order.payment_intent_id)!.metadata).toMatchObject({
      order_id: order.order_id,
      tenant_id: demo.tenant.id,
      purpose: 'wallet_topup',
    });

    const paid = await deliverStripeEvent(
      t,
      signedPaymentSucceededEvent(fake.succeed(order.payment_intent_id), { secret: TEST_WEBHOOK_SECRET }),
    );
    expect(paid.status).toBe(200);
    const [funded] = await events(order.wallet_id, 'wallet.funded');
    expect(funded!.data).toMatchObject({
      wallet_id: order.wallet_id,
      customer_id: order.customer_id,
      order_id: order.order_id,
      amount_cents: 5000,
      balance_cents: 5000,
      channel: 'online',
    });
    const lot = await t.deps.db.walletLot.findFirstOrThrow({ where: { walletId: order.wallet_id } });
    expect(lot).toMatchObject({ source: 'online_topup', remainingCents: 5000, orderId: order.order_id });
    // WALLET_FUNDS_EXPIRY_DAYS defaults to a year.
    expect(lot.expiresAt!.getTime() - Date.now()).toBeGreaterThan(364 * 86_400_000);

    const view = await request(t.app).get(`/api/orders/${order.order_id}`).set('X-Order-Token', order.order_token);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ status: 'paid', amount_cents: 5000, wallet_id: order.wallet_id });
    const forged = await request(t.app).get(`/api/orders/${order.order_id}`).set('X-Order-Token', 'nope');
    expect(forged.status).toBe(401);
    const other = await topUp(1000);
    const crossed = await request(t.app).get(`/api/orders/${order.order_id}`).set('X-Order-Token', other.order_token);
    expect(crossed.body.error).toBe('invalid_token');
  });

  it('when the same payment is notified 20 times at once, with the same and with other event ids, then the wallet is funded once', async () => {
    const order = await topUp(2500);
    const intent = fake.succeed(order.payment_intent_id);
    const same = signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET });
    const deliveries = Array.from({ length: 20 }, (_, i) =>
      i % 4 === 0 ? signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }) : same,
    );
    const answers = await Promise.all(deliveries.map((signed) => deliverStripeEvent(t, signed)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(await events(order.wallet_id, 'wallet.funded')).toHaveLength(1);
    const wallet = await t.deps.db.wallet.findUniqueOrThrow({ where: { id: order.wallet_id } });
    expect(wallet.balanceCents).toBe(2500);
  });

  it('when a payment of the account names an order id that is not one of ours, then it is acknowledged and nothing happens', async () => {
    for (const orderId of ['not-a-uuid', randomUUID()]) {
      const intent = await t.deps.stripe!.paymentIntents.create({
        amount: 700,
        currency: 'usd',
        metadata: { order_id: orderId, tenant_id: demo.tenant.id },
      });
      const res = await deliverStripeEvent(
        t,
        signedPaymentSucceededEvent(fake.succeed(intent.id), { secret: TEST_WEBHOOK_SECRET }),
      );
      expect(res.status).toBe(200);
      expect(await t.deps.db.order.findFirst({ where: { paymentIntentId: intent.id } })).toBeNull();
    }
  });

  it('when the same buyer retries with the same Idempotency-Key, then one order; bad bodies and unknown tenants are 4xx', async () => {
    const ip = clientIp();
    const body = { tenant: demo.tenant.slug, amount_cents: 3000, currency: 'USD', customer: buyer() };
    const first = await request(t.app)
      .post('/api/orders/wallet-topups')
      .set('X-Forwarded-For', ip)
      .set('Idempotency-Key', 'k1')
      .send(body);
    const again = await request(t.app)
      .post('/api/orders/wallet-topups')
      .set('X-Forwarded-For', ip)
      .set('Idempotency-Key', 'k1')
      .send(body);
    expect(again.body.order_id).toBe(first.body.order_id);
    expect(again.headers['idempotent-replayed']).toBe('true');

    for (const [patch, code] of [
      [{ amount_cents: 0 }, 'invalid_body'],
      [{ amount_cents: -100 }, 'invalid_body'],
      [{ amount_cents: 10.5 }, 'invalid_body'],
      [{ currency: 'usd' }, 'invalid_body'],
      [{ tenant: `no-such-${randomUUID()}` }, 'tenant_not_found'],
    ] as const) {
      const res = await request(t.app)
        .post('/api/orders/wallet-topups')
        .set('X-Forwarded-For', clientIp())
        .send({ ...body, ...patch });
      expect([res.status, res.body.error]).toEqual([code === 'tenant_not_found' ? 404 : 400, code]);
    }
  });

  it('when one address buys more often than RATE_LIMIT_ORDERS_PER_MINUTE, then 429 rate_limited', async () => {
    const ip = clientIp();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const res = await request(t.app)
        .post('/api/orders/wallet-topups')
        .set('X-Forwarded-For', ip)
        .send({ tenant: demo.tenant.slug, amount_cents: 100, currency: 'USD', customer: buyer() });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
  });
});

describe('unpaid online orders', () => {
  it('when an order is made, then the lifecycle worker is asked to run the unpaid-order job when its payment window closes', async () => {
    const order = await topUp(1500);
    const queue = new Queue(LIFECYCLE_QUEUE, { connection: t.deps.queueRedis, prefix: t.deps.config.queuePrefix });
    try {
      const job = await queue.getJob(`cancel-unpaid-orders-order-${order.order_id}`);
      expect(job?.name).toBe('cancel-unpaid-orders');
      expect(await job!.getState()).toBe('delayed');
      // Due when the window closes, to the second the request computed it.
      expect(Math.abs(job!.timestamp + job!.opts.delay! - Date.parse(order.pay_by))).toBeLessThan(1_000);
      await job!.remove();
    } finally {
      await queue.close();
    }
  });

  it('when an order is unpaid past its window, then the job cancels the PaymentIntent first and records order.cancelled once, however many runs race', async () => {
    const order = await topUp(1500);
    await t.deps.db.order.update({ where: { id: order.order_id }, data: { payBy: new Date(Date.now() - 1000) } });
    const second = createTestApp(stripeEnv(fake.url));
    try {
      await Promise.all([
        cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe }),
        cancelUnpaidOrders({ db: second.deps.db, stripe: second.deps.stripe }),
      ]);
    } finally {
      await second.close();
    }
    expect(fake.intents.get(order.payment_intent_id)!.status).toBe('canceled');
    const cancelled = await events(order.order_id, 'order.cancelled');
    expect(cancelled).toHaveLength(1);
    expect(Object.keys(cancelled[0]!.data as object).sort()).toEqual([
      'entity_id',
      'entity_type',
      'event_id',
      'schema_version',
    ]);
    const row = await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } });
    expect(row.status).toBe('cancelled');
  });

  it('when the payment succeeded before the job ran, then the job leaves the order to its notification, which funds it', async () => {
    const order = await topUp(1200);
    await t.deps.db.order.update({ where: { id: order.order_id }, data: { payBy: new Date(Date.now() - 1000) } });
    const intent = fake.succeed(order.payment_intent_id);
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('pending_payment');
    await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }));
    expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('paid');
    expect(await events(order.order_id, 'order.cancelled')).toHaveLength(0);
  });

  it('when more due orders than one batch cannot be cancelled yet, then an order due after them is still cancelled, and each of them is asked about again only ten minutes on, by one run, after orders never asked about', async () => {
    // Paid at Stripe, their notifications late: Stripe will not cancel them.
    const stuck: { id: string; paymentIntentId: string | null }[] = [];
    for (let made = 0; made < 60; made += 1) {
      const intent = await t.deps.stripe!.paymentIntents.create({ amount: 1000, currency: 'usd' });
      fake.succeed(intent.id);
      stuck.push(
        await t.deps.db.order.create({
          data: {
            tenantId: demo.tenant.id,
            channel: 'online',
            kind: 'wallet_topup',
            status: 'pending_payment',
            currency: 'USD',
            totalCents: 1000,
            paymentIntentId: intent.id,
            payBy: new Date(Date.now() + 86_400_000),
          },
          select: { id: true, paymentIntentId: true },
        }),
      );
    }
    const order = await topUp(1300);
    const stuckIds = stuck.map(({ id }) => id);
    const ids = [...stuckIds, order.order_id];
    // Due only now, so other files' runs meet them as little as may be: all at one moment, before it.
    await t.deps.db.order.updateMany({ where: { id: { in: ids } }, data: { payBy: new Date(Date.UTC(2000, 0, 1)) } });
    await t.deps.db.order.update({ where: { id: order.order_id }, data: { payBy: new Date(Date.UTC(2000, 0, 2)) } });
    try {
      await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });

      expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('cancelled');
      expect(await events(order.order_id, 'order.cancelled')).toHaveLength(1);
      expect(fake.intents.get(order.payment_intent_id)!.status).toBe('canceled');
      const left = await t.deps.db.order.findMany({ where: { id: { in: stuckIds } } });
      expect(left.map((row) => row.status)).toEqual(stuck.map(() => 'pending_payment'));
      const askedAbout = () =>
        stuck.map(({ paymentIntentId }) => fake.requestsTo('POST', `/v1/payment_intents/${paymentIntentId}/cancel`));
      expect(askedAbout().map((calls) => calls.length)).toEqual(stuck.map(() => 1));

      // The next runs, as the next tick and an order's own run at its pay_by would: none is asked again.
      await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
      await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
      expect(askedAbout().map((calls) => calls.length)).toEqual(stuck.map(() => 1));
      const claimed = await t.deps.db.order.findMany({ where: { id: { in: stuckIds } } });
      for (const row of claimed) {
        expect(row.unpaidCheckAfter!.getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
      }

      /** As if ten minutes went by: their claims run out. */
      const tenMinutesOn = () =>
        t.deps.db.order.updateMany({
          where: { id: { in: stuckIds } },
          data: { unpaidCheckAfter: new Date(Date.now() - 1000) },
        });

      // Two pods' runs at once: each is asked once more, by one of them.
      await tenMinutesOn();
      const second = createTestApp(stripeEnv(fake.url));
      try {
        // Connected first, so both runs claim at the same moment.
        await second.deps.db.$queryRaw`SELECT 1`;
        await Promise.all([
          cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe }),
          cancelUnpaidOrders({ db: second.deps.db, stripe: second.deps.stripe }),
        ]);
      } finally {
        await second.close();
      }
      expect(askedAbout().map((calls) => calls.length)).toEqual(stuck.map(() => 2));

      // An order never asked about goes before them, as its own run at pay_by needs.
      await tenMinutesOn();
      const later = await topUp(1400);
      ids.push(later.order_id);
      await t.deps.db.order.update({ where: { id: later.order_id }, data: { payBy: new Date(Date.UTC(2000, 0, 3)) } });
      await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
      expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: later.order_id } })).status).toBe('cancelled');
      const [laterCancel] = fake.requestsTo('POST', `/v1/payment_intents/${later.payment_intent_id}/cancel`);
      expect(askedAbout().map((calls) => calls.length)).toEqual(stuck.map(() => 3));
      const askedAgain = askedAbout().map((calls) => fake.requests.indexOf(calls[2]!));
      expect(Math.min(...askedAgain)).toBeGreaterThan(fake.requests.indexOf(laterCancel!));
      const still = await t.deps.db.order.findMany({ where: { id: { in: stuckIds } } });
      expect(still.map((row) => row.status)).toEqual(stuck.map(() => 'pending_payment'));
    } finally {
      // Other files' runs must not trip on them.
      await t.deps.db.order.updateMany({
        where: { id: { in: ids }, status: 'pending_payment' },
        data: { status: 'cancelled' },
      });
    }
  });

  it('when a payment lands after the order was cancelled, then it is refunded automatically and never funds the wallet', async () => {
    const order = await topUp(1800);
    await t.deps.db.order.update({ where: { id: order.order_id }, data: { payBy: new Date(Date.now() - 1000) } });
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    // The payment raced the cancellation at the provider and won there.
    const intent = fake.succeed(order.payment_intent_id);
    const signed = signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET });
    await Promise.all([deliverStripeEvent(t, signed), deliverStripeEvent(t, signed)]);
    await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }));

    expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
    const row = await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id }, include: { refunds: true } });
    expect(row).toMatchObject({ status: 'cancelled', reviewReason: 'paid_after_cancelled', refundedCents: 1800 });
    expect(row.refunds).toEqual([
      expect.objectContaining({ source: 'late_payment', status: 'succeeded', amountCents: 1800 }),
    ]);
    const [refunded] = await events(order.order_id, 'refund.created');
    expect(refunded!.data).toMatchObject({ entity_type: 'order', amount_cents: 1800, payment_intent_id: intent.id });
    expect(await events(order.wallet_id, 'wallet.funded')).toHaveLength(0);
  });
});
