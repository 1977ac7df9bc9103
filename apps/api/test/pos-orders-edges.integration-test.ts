import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type Stripe from 'stripe';
import type { DemoTenant } from '@booking/db';
import {
  createTestApp,
  type FakeStripe,
  openFundedWallet,
  openShift,
  openTillOrder,
  seedGiftCard,
  seedTenant,
  startStripeTestApp,
  stopStripeTestApp,
  stripeEnv,
  type TestApp,
  tillCardPayment,
} from '@booking/test-kit';
import { lockWallet } from '../src/locks';
import { voidAbandonedOrders } from '../src/pos-orders/void-abandoned-orders';
import { creditWallet } from '../src/wallets/wallet-ledger';

// The edges of retail orders at the till, on the real PostgreSQL and Redis and the fake Stripe:
// what opening an order and each tender refuse, retries with one Idempotency-Key, an order whose
// shift closed, a wallet paying its own load, the shift's cash, void refunds Stripe refuses, and
// the races of a card payment presented twice, settle against void and two job pods.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let shiftId: string;
let stripe: Stripe;

type AuthHeader = Record<string, string>;
const auth = (key: string): AuthHeader => ({ Authorization: `Bearer ${key}` });
const staff = () => auth(demo.api_keys.staff);
const manager = () => auth(demo.api_keys.manager);

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  stripe = t.deps.stripe!;
  demo = await seedTenant(t.deps);
  shiftId = (await shiftOf(demo, 0)).shift_id;
});
afterEach(() => fake.failNextRefunds(0));
afterAll(() => stopStripeTestApp(t, fake));

const shiftOf = async (tenant: DemoTenant, startingCashCents: number) => ({
  shift_id: await openShift(t, tenant, startingCashCents),
});

/** A wallet with `cents` of value and a card token; returns its id and the token's secret. */
const fundedWallet = (cents: number) =>
  openFundedWallet(t, demo, cents, { email: `pos-edge-${randomUUID()}@example.com`, firstName: 'Sam' });

const giftCard = (cents: number, currency = 'USD') => seedGiftCard(t, demo, cents, currency);

const product = (unitPriceCents: number, quantity = 1) => ({
  type: 'product',
  description: 'souvenir',
  quantity,
  unit_price_cents: unitPriceCents,
});

const open = (body: object, app: TestApp = t, headers: AuthHeader = staff()) =>
  request(app.app).post('/api/pos/orders').set(headers).send(body);

const openOrder = (lines: object[], shift = shiftId, headers: AuthHeader = staff()) =>
  openTillOrder(t, demo, shift, lines, headers);

const tender = (orderId: string, body: object, app: TestApp = t, headers: AuthHeader = staff()) =>
  request(app.app).post(`/api/pos/orders/${orderId}/tenders`).set(headers).send(body);
const settle = (orderId: string, body: object = {}, headers: AuthHeader = staff()) =>
  request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(headers).send(body);
const voidOrder = (orderId: string, headers: AuthHeader = staff()) =>
  request(t.app).post(`/api/pos/orders/${orderId}/void`).set(headers);

/** A card payment the till took through Stripe for this order. */
const cardPayment = async (orderId: string, amountCents: number) =>
  (await tillCardPayment(t, fake, demo, orderId, amountCents)).id;

const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });
const wallet = (id: string) => t.deps.db.wallet.findUniqueOrThrow({ where: { id } });
const card = (id: string) => t.deps.db.giftCard.findUniqueOrThrow({ where: { id } });
const backdate = (orderId: string) =>
  t.deps.db.order.update({
    where: { id: orderId },
    data: { createdAt: new Date(Date.now() - (t.deps.config.orders.posHoldHours + 1) * 3_600_000) },
  });

describe('opening an order', () => {
  it('when an order names a shift, customer or wallet that is not there, then a documented 4xx and no order', async () => {
    const other = await seedTenant(t.deps);
    const otherShift = await shiftOf(other, 0);
    const before = await t.deps.db.order.count({ where: { tenantId: demo.tenant.id } });
    const lines = [product(100)];
    const cases: [object, number, string][] = [
      [{ shift_id: randomUUID(), currency: 'USD', lines }, 404, 'shift_not_found'],
      [{ shift_id: otherShift.shift_id, currency: 'USD', lines }, 404, 'shift_not_found'],
      [{ shift_id: shiftId, currency: 'USD', customer_id: randomUUID(), lines }, 404, 'customer_not_found'],
      [
        {
          shift_id: shiftId,
          currency: 'USD',
          lines: [{ type: 'wallet_load', wallet_id: randomUUID(), amount_cents: 5 }],
        },
        404,
        'wallet_not_found',
      ],
      [{ shift_id: shiftId, currency: 'usd', lines }, 400, 'invalid_body'],
      [
        { shift_id: shiftId, currency: 'USD', lines: Array.from({ length: 51 }, () => product(1)) },
        400,
        'invalid_body',
      ],
      // 1000 × 10,000,000 is above the order total cap.
      [{ shift_id: shiftId, currency: 'USD', lines: [product(10_000_000, 1000)] }, 400, 'invalid_body'],
    ];
    for (const [body, status, code] of cases) {
      const res = await open(body);
      expect([JSON.stringify(body).slice(0, 80), res.status, res.body.error]).toEqual([
        JSON.stringify(body).slice(0, 80),
        status,
        code,
      ]);
    }
    // A wallet of another tenant is not found either.
    const theirWallet = await t.deps.db.wallet.create({
      data: {
        tenantId: other.tenant.id,
        customerId: (
          await t.deps.db.customer.create({
            data: { tenantId: other.tenant.id, email: `other-${randomUUID()}@example.com`, firstName: 'O' },
          })
        ).id,
        currency: 'USD',
      },
    });
    const foreign = await open({
      shift_id: shiftId,
      currency: 'USD',
      lines: [{ type: 'wallet_load', wallet_id: theirWallet.id, amount_cents: 5 }],
    });
    expect([foreign.status, foreign.body.error]).toEqual([404, 'wallet_not_found']);
    // One wallet per order: a second load line is refused.
    const mine = await fundedWallet(0);
    const twoLoads = await open({
      shift_id: shiftId,
      currency: 'USD',
      lines: [
        { type: 'wallet_load', wallet_id: mine.walletId, amount_cents: 5 },
        { type: 'wallet_load', wallet_id: mine.walletId, amount_cents: 6 },
      ],
    });
    expect([twoLoads.status, twoLoads.body.error]).toEqual([400, 'invalid_body']);
    expect(await t.deps.db.order.count({ where: { tenantId: demo.tenant.id } })).toBe(before);
  });

  it('when the till retries with one Idempotency-Key, then one order and one tender', async () => {
    const key = randomUUID();
    const body = { shift_id: shiftId, currency: 'USD', lines: [product(900)] };
    const [first, again] = [
      await request(t.app).post('/api/pos/orders').set(staff()).set('Idempotency-Key', key).send(body),
      await request(t.app).post('/api/pos/orders').set(staff()).set('Idempotency-Key', key).send(body),
    ];
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body.order_id).toBe(first.body.order_id);

    const orderId = first.body.order_id as string;
    const tenderKey = randomUUID();
    const add = () =>
      request(t.app)
        .post(`/api/pos/orders/${orderId}/tenders`)
        .set(staff())
        .set('Idempotency-Key', tenderKey)
        .send({ type: 'cash', amount_cents: 400 });
    const [one, two] = [await add(), await add()];
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(two.body.tenders).toHaveLength(1);
    expect(await t.deps.db.orderTender.count({ where: { orderId } })).toBe(1);
  });
});

describe('tenders', () => {
  it('when a gift card or card payment does not fit the order, then a documented 4xx and nothing held', async () => {
    const order = await openOrder([product(2000)]);
    const small = await giftCard(300);
    const euro = await giftCard(5000, 'EUR');
    const cases: [object, number, string][] = [
      [{ type: 'gift_card', amount_cents: 100, gift_card_code: euro.code }, 400, 'gift_card_currency_mismatch'],
      [{ type: 'gift_card', amount_cents: 301, gift_card_code: small.code }, 409, 'insufficient_gift_card_balance'],
      [{ type: 'gift_card', amount_cents: 100 }, 400, 'invalid_body'],
      [{ type: 'card', amount_cents: 100 }, 400, 'invalid_body'],
      [{ type: 'card', amount_cents: 100, payment_reference: 'pi_x', gift_card_code: small.code }, 400, 'invalid_body'],
      [{ type: 'cheque', amount_cents: 100 }, 400, 'invalid_body'],
    ];
    for (const [body, status, code] of cases) {
      const res = await tender(order.order_id, body);
      expect([JSON.stringify(body), res.status, res.body.error]).toEqual([JSON.stringify(body), status, code]);
    }
    const short = await tender(order.order_id, { type: 'gift_card', amount_cents: 301, gift_card_code: small.code });
    expect(short.body.detail).toMatchObject({ available_cents: 300 });

    // A payment for another amount, one refunded, and one not yet succeeded are not payments of this tender.
    const otherAmount = await cardPayment(order.order_id, 700);
    const refunded = await cardPayment(order.order_id, 500);
    await stripe.refunds.create({ payment_intent: refunded, amount: 100 });
    const unpaid = await stripe.paymentIntents.create({
      amount: 500,
      currency: 'usd',
      metadata: { tenant_id: demo.tenant.id, purpose: 'pos_order', order_id: order.order_id },
    });
    for (const reference of [otherAmount, refunded, unpaid.id]) {
      const res = await tender(order.order_id, { type: 'card', amount_cents: 500, payment_reference: reference });
      expect([reference, res.status, res.body.error]).toEqual([reference, 400, 'payment_reference_invalid']);
    }
    // A payment pays for one tender only.
    const paid = await cardPayment(order.order_id, 500);
    expect((await tender(order.order_id, { type: 'card', amount_cents: 500, payment_reference: paid })).status).toBe(
      201,
    );
    const twice = await tender(order.order_id, { type: 'card', amount_cents: 500, payment_reference: paid });
    expect([twice.status, twice.body.error]).toEqual([409, 'payment_reference_used']);

    expect(await card(small.id)).toMatchObject({ heldCents: 0, balanceCents: 300 });
    expect(await card(euro.id)).toMatchObject({ heldCents: 0 });
    expect(await t.deps.db.orderTender.count({ where: { orderId: order.order_id } })).toBe(1);
  });

  it('when a tender names an online order or another tenant’s order, then 404 order_not_found', async () => {
    const online = await t.deps.db.order.create({
      data: {
        tenantId: demo.tenant.id,
        channel: 'online',
        kind: 'wallet_topup',
        status: 'pending_payment',
        currency: 'USD',
        totalCents: 1000,
      },
    });
    const res = await tender(online.id, { type: 'cash', amount_cents: 100 });
    expect([res.status, res.body.error]).toEqual([404, 'order_not_found']);

    const other = await seedTenant(t.deps);
    const mine = await openOrder([product(100)]);
    const theirs = await tender(mine.order_id, { type: 'cash', amount_cents: 100 }, t, auth(other.api_keys.staff));
    expect([theirs.status, theirs.body.error]).toEqual([404, 'order_not_found']);
    const theirVoid = await voidOrder(mine.order_id, auth(other.api_keys.staff));
    expect([theirVoid.status, theirVoid.body.error]).toEqual([404, 'order_not_found']);
    expect(await t.deps.db.orderTender.count({ where: { orderId: mine.order_id } })).toBe(0);
  });

  it('when two tills (two API replicas) present one card payment at once, then one tender takes it and the other is 409 payment_reference_used', async () => {
    const second = createTestApp(stripeEnv(fake.url));
    try {
      for (let round = 0; round < 5; round += 1) {
        const order = await openOrder([product(1000)]);
        const reference = await cardPayment(order.order_id, 500);
        const body = { type: 'card', amount_cents: 500, payment_reference: reference };
        const answers = await Promise.all([tender(order.order_id, body), tender(order.order_id, body, second)]);
        expect(answers.map((x) => x.status).sort()).toEqual([201, 409]);
        expect(answers.find((x) => x.status === 409)!.body.error).toBe('payment_reference_used');
        expect(await t.deps.db.orderTender.count({ where: { paymentReference: reference } })).toBe(1);
      }
    } finally {
      await second.close();
    }
  });

  it('when an order was settled or voided, then it takes no tender and is neither settled nor voided again', async () => {
    const settled = await openOrder([product(100)]);
    await tender(settled.order_id, { type: 'cash', amount_cents: 100 });
    expect((await settle(settled.order_id)).status).toBe(200);
    const voided = await openOrder([product(100)]);
    expect((await voidOrder(voided.order_id)).status).toBe(200);

    for (const orderId of [settled.order_id, voided.order_id]) {
      for (const res of [
        await tender(orderId, { type: 'cash', amount_cents: 1 }),
        await settle(orderId),
        await voidOrder(orderId),
      ]) {
        expect([res.status, res.body.error]).toEqual([409, 'order_not_open']);
      }
    }
  });
});

describe('settling', () => {
  it('when one wallet pays for its own load, then the capture and the funding both land', async () => {
    const payer = await fundedWallet(1000);
    const order = await openOrder([
      product(500),
      { type: 'wallet_load', wallet_id: payer.walletId, amount_cents: 500 },
    ]);
    expect(
      (await tender(order.order_id, { type: 'wallet', amount_cents: 1000, wallet_token: payer.secret })).status,
    ).toBe(201);
    const res = await settle(order.order_id);
    expect(res.body).toMatchObject({ status: 'confirmed', paid_cents: 1000 });
    expect(await wallet(payer.walletId)).toMatchObject({ balanceCents: 500, heldCents: 0 });
    const [spent] = await events(payer.walletId, 'wallet.spent');
    expect(spent!.data).toMatchObject({ amount_cents: 1000, balance_cents: 0, order_id: order.order_id });
    const [funded] = await events(payer.walletId, 'wallet.funded');
    expect(funded!.data).toMatchObject({ amount_cents: 500, balance_cents: 500, channel: 'pos' });
  });

  it('when a manager confirms an order with nothing tendered, then paid is 0 and the whole total is due', async () => {
    const order = await openOrder([product(1200)]);
    const res = await settle(order.order_id, { unpaid: true }, manager());
    expect(res.body).toMatchObject({
      status: 'confirmed',
      paid_cents: 0,
      confirmed_unpaid: true,
      balance_due_cents: 1200,
    });
    const [confirmed] = await events(order.order_id, 'order.confirmed');
    expect(confirmed!.data).toMatchObject({
      paid_cents: 0,
      balance_due_cents: 1200,
      confirmed_unpaid: true,
      tenders: [],
    });
    const bad = await settle((await openOrder([product(1)])).order_id, { unpaid: 'yes' }, manager());
    expect([bad.status, bad.body.error]).toEqual([400, 'invalid_body']);
  });

  it('when the shift closes before the order settles, then settling is 409 shift_closed and voiding still releases the holds', async () => {
    const own = await seedTenant(t.deps);
    const shift = await shiftOf(own, 0);
    const customer = await t.deps.db.customer.create({
      data: { tenantId: own.tenant.id, email: `close-${randomUUID()}@example.com`, firstName: 'C' },
    });
    const opened = await request(t.app)
      .post('/api/v1/wallets')
      .set(auth(own.api_keys.staff))
      .send({ customer_id: customer.id, currency: 'USD' });
    const walletId = opened.body.wallet_id as string;
    await t.deps.db.$transaction(async (tx) => {
      const locked = (await lockWallet(tx, { tenantId: own.tenant.id }, walletId))!;
      await creditWallet(tx, locked, { kind: 'fund', source: 'pos_load', amountCents: 400, expiresAt: null });
    });
    const token = await request(t.app)
      .post(`/api/v1/wallets/${walletId}/tokens`)
      .set(auth(own.api_keys.staff))
      .send({ kind: 'qr' });

    const order = await openOrder([product(700)], shift.shift_id, auth(own.api_keys.staff));
    await tender(order.order_id, { type: 'cash', amount_cents: 300 }, t, auth(own.api_keys.staff));
    const held = await tender(
      order.order_id,
      { type: 'wallet', amount_cents: 400, wallet_token: token.body.secret },
      t,
      auth(own.api_keys.staff),
    );
    expect(held.status).toBe(201);
    const closed = await request(t.app)
      .post('/api/pos/shifts/close')
      .set(auth(own.api_keys.manager))
      .send({ shift_id: shift.shift_id, counted_cash_cents: 0 });
    // Cash of an order not settled is not the shift's yet.
    expect(closed.body).toMatchObject({ collected_cash_cents: 0, variance_cents: 0 });

    const late = await settle(order.order_id, {}, auth(own.api_keys.staff));
    expect([late.status, late.body.error]).toEqual([409, 'shift_closed']);
    const voided = await voidOrder(order.order_id, auth(own.api_keys.staff));
    expect(voided.body.status).toBe('voided');
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 400, heldCents: 0 });
  });
});

describe('shift cash', () => {
  it('when the shift closes, then cash tenders of settled orders count, less cash refunded out of it; held and voided cash does not', async () => {
    const own = await seedTenant(t.deps);
    const staffOf = auth(own.api_keys.staff);
    const managerOf = auth(own.api_keys.manager);
    const shift = await shiftOf(own, 1000);

    const sold = await openOrder([product(700)], shift.shift_id, staffOf);
    const cash = await tender(sold.order_id, { type: 'cash', amount_cents: 700 }, t, staffOf);
    expect((await settle(sold.order_id, {}, staffOf)).status).toBe(200);
    const refund = await request(t.app)
      .post(`/api/v1/orders/${sold.order_id}/refunds`)
      .set(managerOf)
      .send({ amount_cents: 250, tender_id: cash.body.tenders[0].tender_id });
    expect(refund.status).toBe(201);

    const pending = await openOrder([product(200)], shift.shift_id, staffOf);
    await tender(pending.order_id, { type: 'cash', amount_cents: 200 }, t, staffOf);
    const voided = await openOrder([product(300)], shift.shift_id, staffOf);
    await tender(voided.order_id, { type: 'cash', amount_cents: 300 }, t, staffOf);
    expect((await voidOrder(voided.order_id, staffOf)).status).toBe(200);

    const closed = await request(t.app)
      .post('/api/pos/shifts/close')
      .set(managerOf)
      .send({ shift_id: shift.shift_id, counted_cash_cents: 1450 });
    expect(closed.body).toMatchObject({
      collected_cash_cents: 450,
      expected_cash_cents: 1450,
      variance_cents: 0,
    });
  });
});

describe('voiding', () => {
  it('when Stripe refuses the card refund of a void, then it stays pending and the job gives the money back once', async () => {
    const order = await openOrder([product(800)]);
    const reference = await cardPayment(order.order_id, 800);
    await tender(order.order_id, { type: 'card', amount_cents: 800, payment_reference: reference });
    // The first try and both of the SDK's retries.
    fake.failNextRefunds(3);
    const voided = await voidOrder(order.order_id);
    expect(voided.body.status).toBe('voided');
    expect(voided.body.refunds).toEqual([expect.objectContaining({ status: 'pending', amount_cents: 800 })]);
    expect(fake.refunds.filter((r) => r.payment_intent === reference)).toHaveLength(0);
    expect(await events(order.order_id, 'refund.created')).toHaveLength(0);

    // The job retries refunds left pending for a minute.
    const later = new Date(Date.now() + 61_000);
    await voidAbandonedOrders(t.deps, later);
    await voidAbandonedOrders(t.deps, later);
    expect(fake.refunds.filter((r) => r.payment_intent === reference)).toHaveLength(1);
    const [refund] = await t.deps.db.orderRefund.findMany({ where: { orderId: order.order_id } });
    expect(refund).toMatchObject({ status: 'succeeded', source: 'void', amountCents: 800 });
    const created = await events(order.order_id, 'refund.created');
    expect(created).toHaveLength(1);
    expect(created[0]!.data).toMatchObject({ refund_id: refund!.id, payment_intent_id: reference, amount_cents: 800 });
  });
});

describe('retrying void refunds', () => {
  it('when Stripe keeps refusing one void refund, then the job still gives back the others and keeps that one pending', async () => {
    // A voided order whose card payment Stripe does not know: its refund is refused every time.
    const gone = await t.deps.db.order.create({
      data: {
        tenantId: demo.tenant.id,
        channel: 'pos',
        kind: 'retail',
        status: 'voided',
        shiftId,
        currency: 'USD',
        totalCents: 300,
        voidedAt: new Date(),
        tenders: {
          create: {
            type: 'card',
            status: 'released',
            amountCents: 300,
            paymentReference: `pi_gone_${randomUUID()}`,
          },
        },
      },
      include: { tenders: true },
    });
    const refused = await t.deps.db.orderRefund.create({
      data: {
        tenantId: demo.tenant.id,
        orderId: gone.id,
        tenderId: gone.tenders[0]!.id,
        source: 'void',
        status: 'pending',
        amountCents: 300,
        reason: 'order voided',
      },
    });
    try {
      const order = await openOrder([product(600)]);
      const reference = await cardPayment(order.order_id, 600);
      await tender(order.order_id, { type: 'card', amount_cents: 600, payment_reference: reference });
      fake.failNextRefunds(3);
      expect((await voidOrder(order.order_id)).body.status).toBe('voided');

      await voidAbandonedOrders(t.deps, new Date(Date.now() + 61_000));
      expect(fake.refunds.filter((r) => r.payment_intent === reference)).toHaveLength(1);
      expect(await events(order.order_id, 'refund.created')).toHaveLength(1);
      expect(await t.deps.db.orderRefund.findUniqueOrThrow({ where: { id: refused.id } })).toMatchObject({
        status: 'pending',
      });
    } finally {
      // Out of the way of every later run of the job.
      await t.deps.db.orderRefund.update({ where: { id: refused.id }, data: { status: 'failed' } });
    }
  });
});

describe('races', () => {
  it('when settle and void race on an order held by wallet, gift card and cash, then one wins, the other is 409 order_not_open, and every hold is captured or released', async () => {
    for (let round = 0; round < 10; round += 1) {
      const payer = await fundedWallet(500);
      const gift = await giftCard(400);
      const order = await openOrder([product(1000)]);
      await tender(order.order_id, { type: 'wallet', amount_cents: 500, wallet_token: payer.secret });
      await tender(order.order_id, { type: 'gift_card', amount_cents: 400, gift_card_code: gift.code });
      await tender(order.order_id, { type: 'cash', amount_cents: 100 });
      const [settled, voided] = await Promise.all([settle(order.order_id), voidOrder(order.order_id)]);
      expect([settled.status, voided.status].sort()).toEqual([200, 409]);
      const loser = settled.status === 409 ? settled : voided;
      expect(loser.body.error).toBe('order_not_open');

      const won = settled.status === 200;
      expect(await wallet(payer.walletId)).toMatchObject({ balanceCents: won ? 0 : 500, heldCents: 0 });
      expect(await card(gift.id)).toMatchObject({ balanceCents: won ? 0 : 400, heldCents: 0 });
      const tenders = await t.deps.db.orderTender.findMany({ where: { orderId: order.order_id } });
      expect(new Set(tenders.map((x) => x.status))).toEqual(new Set([won ? 'captured' : 'released']));
      expect(await events(payer.walletId, 'wallet.spent')).toHaveLength(won ? 1 : 0);
      expect(await events(order.order_id, 'gift_card.redeemed')).toHaveLength(won ? 1 : 0);
      expect(await events(order.order_id, 'order.confirmed')).toHaveLength(won ? 1 : 0);
    }
  });

  it('when two worker pods run the abandoned-order job at once, then each order is voided once, its holds released once and its card refunded once', async () => {
    const second = createTestApp(stripeEnv(fake.url));
    try {
      const payer = await fundedWallet(600);
      const gift = await giftCard(300);
      const order = await openOrder([product(2000)]);
      await tender(order.order_id, { type: 'wallet', amount_cents: 600, wallet_token: payer.secret });
      await tender(order.order_id, { type: 'gift_card', amount_cents: 300, gift_card_code: gift.code });
      const reference = await cardPayment(order.order_id, 1100);
      await tender(order.order_id, { type: 'card', amount_cents: 1100, payment_reference: reference });
      await backdate(order.order_id);

      const counts = await Promise.all([voidAbandonedOrders(t.deps), voidAbandonedOrders(second.deps)]);
      expect(counts[0] + counts[1]).toBeGreaterThanOrEqual(1);
      expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('voided');
      expect(await wallet(payer.walletId)).toMatchObject({ balanceCents: 600, heldCents: 0 });
      expect(
        await t.deps.db.walletEntry.count({
          where: { walletId: payer.walletId, orderId: order.order_id, kind: 'release' },
        }),
      ).toBe(1);
      expect(await card(gift.id)).toMatchObject({ balanceCents: 300, heldCents: 0 });
      expect(fake.refunds.filter((r) => r.payment_intent === reference)).toHaveLength(1);
      expect(await events(order.order_id, 'refund.created')).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
