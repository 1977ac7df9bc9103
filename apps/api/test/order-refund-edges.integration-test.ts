import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  deliverStripeEvent,
  type FakeStripe,
  openShift,
  openTillOrder,
  seedTenant,
  signedChargeRefundedEvent,
  signedDisputeCreatedEvent,
  signedPaymentSucceededEvent,
  startStripeTestApp,
  stopStripeTestApp,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  walletTopUp,
} from '@booking/test-kit';
import { lockWallet } from '../src/locks';
import { creditWallet, debitWallet } from '../src/wallets/wallet-ledger';
import { expireWalletFunds } from '../src/wallets/expire-wallet-funds';

// Order money at its edges, on the real PostgreSQL and Redis with the fake Stripe: refunds that
// reach a wallet load, notifications that arrive before the payment or about a payment the order
// never kept, a till card payment refunded at Stripe while the order is open, holds against
// expiring value, and the cap on stored value.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let shiftId: string;
const as = (role: 'staff' | 'manager' | 'admin') => ({ Authorization: `Bearer ${demo.api_keys[role]}` });

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  demo = await seedTenant(t.deps);
  shiftId = await openShift(t, demo);
});
afterAll(() => stopStripeTestApp(t, fake));

const wallet = (id: string) => t.deps.db.wallet.findUniqueOrThrow({ where: { id } });
const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });

const topUp = (amountCents: number, email = `edge-${randomUUID()}@example.com`) =>
  walletTopUp(t, demo, amountCents, { email, first_name: 'R' });

async function emptyWallet() {
  const customer = await t.deps.db.customer.create({
    data: { tenantId: demo.tenant.id, email: `edge-${randomUUID()}@example.com`, firstName: 'P' },
  });
  const opened = await request(t.app)
    .post('/api/v1/wallets')
    .set(as('staff'))
    .send({ customer_id: customer.id, currency: 'USD' });
  return opened.body.wallet_id as string;
}

const tillOrder = async (lines: object[]) => (await openTillOrder(t, demo, shiftId, lines)).order_id;
const tender = (id: string, body: object) =>
  request(t.app).post(`/api/pos/orders/${id}/tenders`).set(as('staff')).send(body);
const settle = (id: string) => request(t.app).post(`/api/pos/orders/${id}/settle`).set(as('staff')).send({});
const refund = (id: string, body: object, role: 'manager' | 'admin' = 'manager') =>
  request(t.app).post(`/api/v1/orders/${id}/refunds`).set(as(role)).send(body);
const load = (walletId: string, cents: number) => ({ type: 'wallet_load', wallet_id: walletId, amount_cents: cents });
const product = (cents: number) => ({ type: 'product', description: 'map', quantity: 1, unit_price_cents: cents });

describe('refunds that reach a wallet load', () => {
  it('when a load-only order is refunded without line_id, then its funding leaves the wallet too', async () => {
    const walletId = await emptyWallet();
    const id = await tillOrder([load(walletId, 2000)]);
    await tender(id, { type: 'cash', amount_cents: 2000 });
    expect((await settle(id)).status).toBe(200);
    const res = await refund(id, { amount_cents: 2000 });
    expect(res.body).toMatchObject({ status: 'succeeded', debited_cents: 2000, shortfall_cents: 0 });
    expect((await wallet(walletId)).balanceCents).toBe(0);
    expect(await events(walletId, 'wallet.funding_returned')).toHaveLength(1);
  });

  it('when refunds give back the other lines first, then only what reaches the load is taken back, and a shortfall is counted once', async () => {
    const walletId = await emptyWallet();
    const id = await tillOrder([product(1000), load(walletId, 1000)]);
    await tender(id, { type: 'cash', amount_cents: 2000 });
    await settle(id);
    // The product first: the wallet keeps its value.
    const first = await refund(id, { amount_cents: 1000 });
    expect(first.body).toMatchObject({ debited_cents: 0, shortfall_cents: 0 });
    expect(await events(walletId, 'wallet.funding_returned')).toHaveLength(0);
    // The customer spends the loaded value, then adds 700 of their own.
    await t.deps.db.$transaction(async (tx) => {
      const w = (await lockWallet(tx, { tenantId: demo.tenant.id }, walletId))!;
      await debitWallet(tx, w, { kind: 'adjustment', amountCents: 1000, fromHold: false });
      await creditWallet(tx, w, { kind: 'adjustment', source: 'adjustment', amountCents: 700, expiresAt: null });
    });
    const refused = await refund(id, { amount_cents: 1000 });
    expect(refused.body).toMatchObject({ error: 'refund_exceeds_available', detail: { available_cents: 700 } });
    const second = await refund(id, { amount_cents: 1000, allow_shortfall: true }, 'admin');
    expect(second.body).toMatchObject({ debited_cents: 700, shortfall_cents: 300 });
    // Everything is refunded and the load counted returned, shortfall included: nothing more is taken.
    const line = await t.deps.db.orderLine.findFirstOrThrow({ where: { orderId: id, type: 'wallet_load' } });
    expect(line.returnedCents).toBe(1000);
    expect((await refund(id, { amount_cents: 1 })).body.error).toBe('refund_exceeds_paid');
  });

  it('when an order would load two wallets, then it is refused', async () => {
    const [a, b] = [await emptyWallet(), await emptyWallet()];
    const res = await request(t.app)
      .post('/api/pos/orders')
      .set(as('staff'))
      .send({ shift_id: shiftId, currency: 'USD', lines: [load(a, 100), load(b, 100)] });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_body']);
  });
});

describe('provider notifications at the edges', () => {
  it('when a refund is notified before the payment, then it is refused for a later retry and applied once the payment is', async () => {
    const order = await topUp(3000);
    const intent = fake.succeed(order.payment_intent_id);
    const made = await t.deps.stripe!.refunds.create({ payment_intent: intent.id, amount: 3000 });
    const refunded = signedChargeRefundedEvent(intent, [made as never], { secret: TEST_WEBHOOK_SECRET });
    expect((await deliverStripeEvent(t, refunded)).status).toBe(503);
    await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }));
    // Stripe retries the notification it got no 2xx for.
    expect((await deliverStripeEvent(t, refunded)).status).toBe(200);
    const row = await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } });
    expect(row).toMatchObject({ status: 'paid', refundedCents: 3000 });
    expect((await wallet(order.wallet_id)).balanceCents).toBe(0);
  });

  it('when a payment the order did not keep is disputed, then the customer’s other value is untouched', async () => {
    const email = `edge-${randomUUID()}@example.com`;
    const good = await topUp(4000, email);
    await deliverStripeEvent(
      t,
      signedPaymentSucceededEvent(fake.succeed(good.payment_intent_id), { secret: TEST_WEBHOOK_SECRET }),
    );
    const bad = await topUp(2500, email);
    const mismatched = { ...fake.succeed(bad.payment_intent_id), amount_received: 2400 };
    // More failures than the Stripe client retries: the refund is never made.
    fake.failNextRefunds(5);
    const paid = await deliverStripeEvent(
      t,
      signedPaymentSucceededEvent(mismatched as never, { secret: TEST_WEBHOOK_SECRET }),
    );
    fake.failNextRefunds(0);
    expect(paid.status).toBeGreaterThanOrEqual(500);
    const disputed = await deliverStripeEvent(
      t,
      signedDisputeCreatedEvent(mismatched as never, 2400, { secret: TEST_WEBHOOK_SECRET }),
    );
    expect(disputed.status).toBe(200);
    expect((await wallet(good.wallet_id)).balanceCents).toBe(4000);
    expect(await events(good.wallet_id, 'wallet.funding_returned')).toHaveLength(0);
    expect(await events(bad.order_id, 'order.cancelled')).toHaveLength(1);
  });

  it('when a till order’s card payment is refunded at Stripe while the order is open, then the tender no longer pays for it', async () => {
    const id = await tillOrder([product(1200)]);
    const created = await t.deps.stripe!.paymentIntents.create({
      amount: 1200,
      currency: 'usd',
      metadata: { tenant_id: demo.tenant.id, purpose: 'pos_order', order_id: id },
    });
    const intent = fake.succeed(created.id);
    expect((await tender(id, { type: 'card', amount_cents: 1200, payment_reference: intent.id })).status).toBe(201);
    const made = await t.deps.stripe!.refunds.create({ payment_intent: intent.id });
    const notified = await deliverStripeEvent(
      t,
      signedChargeRefundedEvent(intent, [made as never], { secret: TEST_WEBHOOK_SECRET }),
    );
    expect(notified.status).toBe(200);
    const settled = await settle(id);
    expect(settled.body).toMatchObject({ error: 'order_not_fully_paid', detail: { balance_due_cents: 1200 } });
    expect(await events(id, 'refund.created')).toHaveLength(1);
  });
});

describe('a till card payment partly refunded at Stripe while its order is open', () => {
  it('when the order is settled, then the tender pays only what it kept; when voided, only the rest goes back', async () => {
    for (const end of ['settle', 'void'] as const) {
      const id = await tillOrder([product(1000)]);
      const created = await t.deps.stripe!.paymentIntents.create({
        amount: 1000,
        currency: 'usd',
        metadata: { tenant_id: demo.tenant.id, purpose: 'pos_order', order_id: id },
      });
      const intent = fake.succeed(created.id);
      await tender(id, { type: 'card', amount_cents: 1000, payment_reference: intent.id });
      const made = await t.deps.stripe!.refunds.create({ payment_intent: intent.id, amount: 400 });
      await deliverStripeEvent(t, signedChargeRefundedEvent(intent, [made as never], { secret: TEST_WEBHOOK_SECRET }));
      if (end === 'settle') {
        expect((await settle(id)).body).toMatchObject({
          error: 'order_not_fully_paid',
          detail: { balance_due_cents: 400 },
        });
        expect((await tender(id, { type: 'cash', amount_cents: 400 })).status).toBe(201);
        expect((await settle(id)).body).toMatchObject({ status: 'confirmed', paid_cents: 1000 });
      } else {
        expect((await request(t.app).post(`/api/pos/orders/${id}/void`).set(as('staff'))).status).toBe(200);
        expect(fake.refunds.filter((r) => r.payment_intent === intent.id).map((r) => r.amount)).toEqual([400, 600]);
      }
    }
  });
});

describe('holds, expiry and the cap', () => {
  it('when an open order holds value and the soonest-expiring lot expires, then the hold covers it: the balance does not depend on when the job runs', async () => {
    const walletId = await emptyWallet();
    await t.deps.db.$transaction(async (tx) => {
      const w = (await lockWallet(tx, { tenantId: demo.tenant.id }, walletId))!;
      await creditWallet(tx, w, {
        kind: 'fund',
        source: 'pos_load',
        amountCents: 1000,
        expiresAt: new Date(Date.now() + 60_000),
      });
      await creditWallet(tx, w, { kind: 'fund', source: 'pos_load', amountCents: 1000, expiresAt: null });
    });
    const token = await request(t.app).post(`/api/v1/wallets/${walletId}/tokens`).set(as('staff')).send({ kind: 'qr' });
    const id = await tillOrder([product(1000)]);
    await tender(id, { type: 'wallet', amount_cents: 1000, wallet_token: token.body.secret });
    await expireWalletFunds({ db: t.deps.db }, new Date(Date.now() + 120_000));
    await settle(id);
    expect((await wallet(walletId)).balanceCents).toBe(1000);
  });

  it('when a credit would take a wallet past 10,000,000.00, then 409 wallet_limit_exceeded and nothing is credited', async () => {
    const walletId = await emptyWallet();
    const path = `/api/v1/wallets/${walletId}/adjustments`;
    for (let i = 0; i < 10; i += 1) {
      const res = await request(t.app).post(path).set(as('admin')).send({ amount_cents: 100_000_000, reason: 'big' });
      expect(res.status).toBe(201);
    }
    const over = await request(t.app).post(path).set(as('admin')).send({ amount_cents: 1, reason: 'one more' });
    expect([over.status, over.body.error]).toEqual([409, 'wallet_limit_exceeded']);
    expect((await wallet(walletId)).balanceCents).toBe(1_000_000_000);
  });
});
