import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  openShift,
  openTillOrder,
  paidWalletTopUp,
  seedTenant,
  signedChargeRefundedEvent,
  startStripeTestApp,
  stopStripeTestApp,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  tillCardPayment,
} from '@booking/test-kit';

// The rules of order refunds on the real PostgreSQL and Redis with the fake Stripe: cash paid out
// of an open shift only, tenders that cannot be refunded, every refused input leaving nothing
// behind, Idempotency-Key, Stripe refusing a till card refund, and identical refunds and a
// till wallet load's refund racing across two API processes.

let fake: FakeStripe;
let t: TestApp;
let replica: TestApp;
let demo: DemoTenant;
let shiftId: string;

type Role = 'staff' | 'manager' | 'admin';
const as = (role: Role, tenant = demo) => ({ Authorization: `Bearer ${tenant.api_keys[role]}` });

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  replica = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
  shiftId = await openShift(t, demo);
});
afterAll(async () => {
  await replica.close();
  await stopStripeTestApp(t, fake);
});

const refund = (orderId: string, body: object, role: Role = 'manager', app = t.app, tenant = demo) =>
  request(app).post(`/api/v1/orders/${orderId}/refunds`).set(as(role, tenant)).send(body);
const tender = (orderId: string, body: object, tenant = demo) =>
  request(t.app).post(`/api/pos/orders/${orderId}/tenders`).set(as('staff', tenant)).send(body);
const settle = (orderId: string, body: object = {}, role: Role = 'staff', tenant = demo) =>
  request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(as(role, tenant)).send(body);
const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });
const wallet = (id: string) => t.deps.db.wallet.findUniqueOrThrow({ where: { id } });
const product = (cents: number) => ({ type: 'product', description: 'scarf', quantity: 1, unit_price_cents: cents });

const tillOrder = async (lines: object[], shift = shiftId, tenant = demo) =>
  (await openTillOrder(t, tenant, shift, lines)).order_id;

/** A till order paid by one tender and settled; its tender's id. */
async function paidTillOrder(cents: number, body: object = { type: 'cash' }, shift = shiftId, tenant = demo) {
  const id = await tillOrder([product(cents)], shift, tenant);
  expect((await tender(id, { amount_cents: cents, ...body }, tenant)).status).toBe(201);
  const settled = await settle(id, {}, 'staff', tenant);
  expect(settled.status).toBe(200);
  return { id, tenderId: settled.body.tenders[0].tender_id as string };
}

/** A customer's wallet holding `cents` of value, with a QR token to spend it. */
async function fundedWallet(cents: number) {
  const customer = await t.deps.db.customer.create({
    data: { tenantId: demo.tenant.id, email: `rules-${randomUUID()}@example.com`, firstName: 'Wil' },
  });
  const opened = await request(t.app).post('/api/v1/wallets').set(as('staff')).send({
    customer_id: customer.id,
    currency: 'USD',
  });
  const walletId = opened.body.wallet_id as string;
  if (cents > 0) {
    const adjusted = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/adjustments`)
      .set(as('admin'))
      .send({ amount_cents: cents, reason: 'opening value' });
    expect(adjusted.status).toBe(201);
  }
  const token = await request(t.app).post(`/api/v1/wallets/${walletId}/tokens`).set(as('staff')).send({ kind: 'qr' });
  return { walletId, secret: token.body.secret as string };
}

const paidTopUp = (cents: number) =>
  paidWalletTopUp(t, fake, demo, cents, { email: `rules-${randomUUID()}@example.com`, first_name: 'Tam' });

/** A succeeded PaymentIntent for a card tender of the till order. */
const cardPayment = (orderId: string, cents: number) => tillCardPayment(t, fake, demo, orderId, cents);

async function ledgerAgrees(walletId: string) {
  const [row] = await t.deps.db.$queryRaw<{ balance: number; entries: bigint; lots: bigint }[]>`
    SELECT w.balance_cents AS balance,
           (SELECT COALESCE(SUM(balance_delta), 0) FROM wallet_entries WHERE wallet_id = w.id) AS entries,
           (SELECT COALESCE(SUM(remaining_cents), 0) FROM wallet_lots WHERE wallet_id = w.id) AS lots
    FROM wallets w WHERE w.id = ${walletId}::uuid`;
  expect(Number(row!.entries)).toBe(row!.balance);
  expect(Number(row!.lots)).toBe(row!.balance);
  expect(row!.balance).toBeGreaterThanOrEqual(0);
}

describe('cash refunds and shifts', () => {
  it('when cash is refunded, then it comes out of the order’s open shift and its close counts it out; a closed shift is 409, an unknown one 404, another open shift may pay it', async () => {
    // A tenant of its own: this test closes its till's shift.
    const shop = await seedTenant(t.deps);
    const openShift = async () =>
      (await request(t.app).post('/api/pos/shifts/open').set(as('staff', shop)).send({ starting_cash_cents: 1000 }))
        .body.shift_id as string;
    const first = await openShift();
    const { id } = await paidTillOrder(2000, { type: 'cash' }, first, shop);

    const paidOut = await refund(id, { amount_cents: 300, reason: 'returned' }, 'manager', t.app, shop);
    expect(paidOut.status).toBe(201);
    expect(paidOut.body).toMatchObject({ status: 'succeeded', amount_cents: 300, debited_cents: 0 });
    const row = await t.deps.db.orderRefund.findUniqueOrThrow({ where: { id: paidOut.body.refund_id } });
    expect(row.shiftId).toBe(first);
    const closed = await request(t.app)
      .post('/api/pos/shifts/close')
      .set(as('manager', shop))
      .send({ shift_id: first, counted_cash_cents: 2700 });
    expect(closed.body).toMatchObject({ expected_cash_cents: 2700 });

    const late = await refund(id, { amount_cents: 100 }, 'manager', t.app, shop);
    expect([late.status, late.body.error]).toEqual([409, 'shift_closed']);
    for (const unknown of [randomUUID(), shiftId]) {
      // shiftId is another tenant's open shift.
      const res = await refund(id, { amount_cents: 100, shift_id: unknown }, 'manager', t.app, shop);
      expect([res.status, res.body.error]).toEqual([404, 'shift_not_found']);
    }
    const second = await openShift();
    const later = await refund(id, { amount_cents: 100, shift_id: second }, 'manager', t.app, shop);
    expect(later.status).toBe(201);
    expect((await t.deps.db.orderRefund.findUniqueOrThrow({ where: { id: later.body.refund_id } })).shiftId).toBe(
      second,
    );
    const order = await request(t.app).get(`/api/v1/orders/${id}`).set(as('staff', shop));
    expect(order.body).toMatchObject({ refunded_cents: 400, tenders: [{ refunded_cents: 400 }] });
  });
});

describe('tenders that cannot be refunded', () => {
  it('when the card tender was released by a refund at Stripe before the order settled, then naming it is 400 tender_not_refundable and the only captured tender is the default', async () => {
    const id = await tillOrder([product(1200)]);
    const intent = await cardPayment(id, 1200);
    await tender(id, { type: 'card', amount_cents: 1200, payment_reference: intent.id });
    const made = await t.deps.stripe!.refunds.create({ payment_intent: intent.id });
    await deliverStripeEvent(t, signedChargeRefundedEvent(intent, [made as never], { secret: TEST_WEBHOOK_SECRET }));
    const cash = await tender(id, { type: 'cash', amount_cents: 1200 });
    expect((await settle(id)).status).toBe(200);

    const tenderOf = (type: string) =>
      cash.body.tenders.find((x: { type: string }) => x.type === type).tender_id as string;
    const released = await refund(id, { amount_cents: 100, tender_id: tenderOf('card') });
    expect([released.status, released.body.error]).toEqual([400, 'tender_not_refundable']);
    const byDefault = await refund(id, { amount_cents: 100 });
    expect(byDefault.status).toBe(201);
    expect(byDefault.body.tender_id).toBe(tenderOf('cash'));
  });

  it('when an order confirmed unpaid took no money, then its refund is 400 refund_exceeds_paid', async () => {
    const id = await tillOrder([product(900)]);
    expect((await settle(id, { unpaid: true }, 'manager')).status).toBe(200);
    const res = await refund(id, { amount_cents: 1 });
    expect([res.status, res.body.error, res.body.detail.refundable_cents]).toEqual([400, 'refund_exceeds_paid', 0]);
  });
});

describe('refused refunds', () => {
  it('when the input, the role or the tenant is wrong, then the refund is refused with its code and nothing is refunded', async () => {
    const topUp = await paidTopUp(1500);
    const till = await paidTillOrder(800);
    const other = await seedTenant(t.deps);
    const cases: [string, object, Role, number, string, DemoTenant?][] = [
      [topUp.orderId, { amount_cents: 100 }, 'staff', 403, 'forbidden'],
      [topUp.orderId, { amount_cents: 100, allow_shortfall: true }, 'manager', 403, 'forbidden'],
      [topUp.orderId, { amount_cents: 100 }, 'admin', 404, 'order_not_found', other],
      ['not-a-uuid', { amount_cents: 100 }, 'manager', 404, 'order_not_found'],
      [topUp.orderId, {}, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: 0 }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: -5 }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: '100' }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: 100_000_001 }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: 100, reason: 'x'.repeat(501) }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: 100, reason: '' }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: 100, note: 'hi' }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: 100, tender_id: till.tenderId }, 'manager', 400, 'invalid_body'],
      [topUp.orderId, { amount_cents: 1501 }, 'manager', 400, 'refund_exceeds_paid'],
      [till.id, { amount_cents: 801 }, 'manager', 400, 'refund_exceeds_paid'],
      [till.id, { amount_cents: 100, tender_id: randomUUID() }, 'manager', 404, 'tender_not_found'],
      [till.id, { amount_cents: 100, tender_id: 'abc' }, 'manager', 400, 'invalid_body'],
      [till.id, { amount_cents: 100, line_id: randomUUID() }, 'manager', 400, 'invalid_body'],
      [till.id, { amount_cents: 100, shift_id: randomUUID() }, 'manager', 404, 'shift_not_found'],
    ];
    for (const [id, body, role, status, error, tenant] of cases) {
      const res = await refund(id, body, role, t.app, tenant ?? demo);
      expect([res.status, res.body.error, body]).toEqual([status, error, body]);
    }
    for (const id of [topUp.orderId, till.id]) {
      const order = await t.deps.db.order.findUniqueOrThrow({ where: { id }, include: { refunds: true } });
      expect([order.refundedCents, order.refunds]).toEqual([0, []]);
    }
    expect(fake.refunds.filter((r) => r.payment_intent === topUp.intent.id)).toEqual([]);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 1500, heldCents: 0 });
  });

  it('when a till card refund is refused by Stripe, then 502 and the tender and the order are refundable again, with no refund.created', async () => {
    const id = await tillOrder([product(1000)]);
    const intent = await cardPayment(id, 1000);
    const card = await tender(id, { type: 'card', amount_cents: 1000, payment_reference: intent.id });
    expect((await settle(id)).status).toBe(200);
    // Refunded in Stripe's dashboard and never notified: Stripe refuses a second refund.
    await t.deps.stripe!.refunds.create({ payment_intent: intent.id });

    const res = await refund(id, { amount_cents: 400, tender_id: card.body.tenders[0].tender_id });
    expect([res.status, res.body.error]).toEqual([502, 'payment_provider_error']);
    const order = await t.deps.db.order.findUniqueOrThrow({
      where: { id },
      include: { refunds: true, tenders: true },
    });
    expect(order.refundedCents).toBe(0);
    expect(order.tenders[0]!.refundedCents).toBe(0);
    expect(order.refunds.map((r) => r.status)).toEqual(['failed']);
    expect(await events(id, 'refund.created')).toHaveLength(0);
  });
});

describe('Idempotency-Key', () => {
  it('when a refund is retried with the same key, then the first answer is replayed and Stripe refunds once', async () => {
    const topUp = await paidTopUp(2000);
    const key = randomUUID();
    const send = () =>
      request(t.app)
        .post(`/api/v1/orders/${topUp.orderId}/refunds`)
        .set(as('manager'))
        .set('Idempotency-Key', key)
        .send({ amount_cents: 600 });
    const first = await send();
    const again = await send();
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(first.body);
    expect(fake.refunds.filter((r) => r.payment_intent === topUp.intent.id)).toHaveLength(1);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 1400 });
    expect(await events(topUp.walletId, 'wallet.funding_returned')).toHaveLength(1);
  });
});

describe('races across two API processes', () => {
  it('when the same wallet tender refund is sent to both at once, then the tender is refunded once: one credit, one wallet.refunded', async () => {
    for (let round = 0; round < 4; round += 1) {
      const payer = await fundedWallet(700);
      const { id, tenderId } = await paidTillOrder(700, { type: 'wallet', wallet_token: payer.secret });
      const answers = await Promise.all(
        [t.app, replica.app].map((app) => refund(id, { amount_cents: 700, tender_id: tenderId }, 'manager', app)),
      );
      expect(answers.map((a) => [a.status, a.body.error]).sort()).toEqual([
        [201, undefined],
        [400, 'refund_exceeds_paid'],
      ]);
      expect(await wallet(payer.walletId)).toMatchObject({ balanceCents: 700, heldCents: 0 });
      const [credited] = await events(payer.walletId, 'wallet.refunded');
      expect(await events(payer.walletId, 'wallet.refunded')).toHaveLength(1);
      expect(credited!.data).toMatchObject({ amount_cents: 700, balance_cents: 700, order_id: id, reason: null });
      // The refunded value is a new lot with the house expiry, not the spent lot revived.
      const lot = await t.deps.db.walletLot.findFirstOrThrow({
        where: { walletId: payer.walletId, source: 'refund_credit' },
      });
      const days = (lot.expiresAt!.getTime() - lot.createdAt.getTime()) / 86_400_000;
      expect(Math.round(days)).toBe(t.deps.config.wallets.fundsExpiryDays);
      await ledgerAgrees(payer.walletId);
    }
  });

  it('when the same top-up refund is sent to both at once, then Stripe refunds it once', async () => {
    for (let round = 0; round < 3; round += 1) {
      const topUp = await paidTopUp(500);
      const answers = await Promise.all(
        [t.app, replica.app].map((app) => refund(topUp.orderId, { amount_cents: 500 }, 'manager', app)),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 400]);
      expect(fake.refunds.filter((r) => r.payment_intent === topUp.intent.id)).toHaveLength(1);
      expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 0, heldCents: 0 });
      await ledgerAgrees(topUp.walletId);
    }
  });

  it('when a till wallet load is refunded while the loaded value is spent at another till, then the balance never goes below zero and debited + shortfall = the load', async () => {
    for (let round = 0; round < 6; round += 1) {
      const target = await fundedWallet(0);
      const loadOrder = await tillOrder([{ type: 'wallet_load', wallet_id: target.walletId, amount_cents: 1000 }]);
      await tender(loadOrder, { type: 'cash', amount_cents: 1000 });
      const settled = await settle(loadOrder);
      const lineId = settled.body.lines[0].line_id as string;
      const purchase = await tillOrder([product(1000)]);

      // Each round starts the spend a little later, so the two meet at different points.
      const spendAtOtherTill = async () => {
        await new Promise((resolve) => setTimeout(resolve, round * 8));
        const held = await tender(purchase, { type: 'wallet', amount_cents: 1000, wallet_token: target.secret });
        return held.status === 201
          ? request(replica.app).post(`/api/pos/orders/${purchase}/settle`).set(as('staff')).send({})
          : held;
      };
      const [refunded, spent] = await Promise.all([
        refund(loadOrder, { amount_cents: 1000, line_id: lineId, allow_shortfall: true }, 'admin'),
        spendAtOtherTill(),
      ]);
      expect(refunded.status).toBe(201);
      expect(refunded.body.debited_cents + refunded.body.shortfall_cents).toBe(1000);
      if (spent.status === 200) expect(refunded.body).toMatchObject({ debited_cents: 0, shortfall_cents: 1000 });
      else expect([spent.body.error, refunded.body.debited_cents]).toEqual(['insufficient_wallet_balance', 1000]);
      const [returned] = await events(target.walletId, 'wallet.funding_returned');
      expect(returned!.data).toMatchObject({
        channel: 'pos',
        reason: 'refund',
        debited_cents: refunded.body.debited_cents,
        shortfall_cents: refunded.body.shortfall_cents,
      });
      expect(await events(target.walletId, 'wallet.refund_review_required')).toHaveLength(
        refunded.body.shortfall_cents > 0 ? 1 : 0,
      );
      expect(await wallet(target.walletId)).toMatchObject({ balanceCents: 0, heldCents: 0 });
      await ledgerAgrees(target.walletId);
    }
  });
});
