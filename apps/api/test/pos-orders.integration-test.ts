import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  createBooking,
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
import { voidAbandonedOrders } from '../src/pos-orders/void-abandoned-orders';

// Retail orders at the till on the real PostgreSQL and Redis, with card tenders checked against
// the fake Stripe: tenders of every kind, settling, confirming unpaid, voiding, and the races
// between tills.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let shiftId: string;

const staff = () => ({ Authorization: `Bearer ${demo.api_keys.staff}` });
const manager = () => ({ Authorization: `Bearer ${demo.api_keys.manager}` });

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  demo = await seedTenant(t.deps);
  shiftId = await openShift(t, demo, 10000);
});
afterAll(() => stopStripeTestApp(t, fake));

/** A wallet with `cents` of value and a card token; returns its id and the token's secret. */
const fundedWallet = (cents: number, currency = 'USD') =>
  openFundedWallet(t, demo, cents, { currency, email: `pos-${randomUUID()}@example.com`, firstName: 'Pat' });

const giftCard = (cents: number) => seedGiftCard(t, demo, cents);

const openOrder = (lines: object[], app: TestApp = t, shift = shiftId) => openTillOrder(app, demo, shift, lines);

const product = (unitPriceCents: number, quantity = 1) => ({
  type: 'product',
  sku: 'SKU-1',
  description: 'souvenir',
  quantity,
  unit_price_cents: unitPriceCents,
});

const tender = (orderId: string, body: object, app: TestApp = t) =>
  request(app.app).post(`/api/pos/orders/${orderId}/tenders`).set(staff()).send(body);

/** A card payment the till took through Stripe for this order. */
const cardPayment = async (orderId: string, amountCents: number) =>
  (await tillCardPayment(t, fake, demo, orderId, amountCents)).id;

const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });

describe('a till order paid with every kind of tender', () => {
  it('when it is settled, then tenders are captured and order.confirmed, wallet.spent, gift_card.redeemed (order) and wallet.funded (pos) are recorded', async () => {
    const payer = await fundedWallet(1000);
    const loaded = await fundedWallet(0);
    const card = await giftCard(2000);
    const order = await openOrder([
      product(1500, 2),
      { type: 'wallet_load', wallet_id: loaded.walletId, amount_cents: 2000 },
    ]);
    expect(order.total_cents).toBe(5000);

    expect(
      (await tender(order.order_id, { type: 'wallet', amount_cents: 1000, wallet_token: payer.secret })).status,
    ).toBe(201);
    expect(
      (await tender(order.order_id, { type: 'gift_card', amount_cents: 1500, gift_card_code: card.code })).status,
    ).toBe(201);
    expect((await tender(order.order_id, { type: 'cash', amount_cents: 1000 })).status).toBe(201);
    const reference = await cardPayment(order.order_id, 1500);
    const last = await tender(order.order_id, { type: 'card', amount_cents: 1500, payment_reference: reference });
    expect(last.status).toBe(201);
    expect(last.body.tenders.map((x: { status: string }) => x.status)).toEqual(['held', 'held', 'held', 'held']);
    expect(await t.deps.db.wallet.findUniqueOrThrow({ where: { id: payer.walletId } })).toMatchObject({
      balanceCents: 1000,
      heldCents: 1000,
    });
    expect(await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: card.id } })).toMatchObject({
      balanceCents: 2000,
      heldCents: 1500,
    });

    const settled = await request(t.app).post(`/api/pos/orders/${order.order_id}/settle`).set(staff()).send({});
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({
      status: 'confirmed',
      paid_cents: 5000,
      confirmed_unpaid: false,
      balance_due_cents: 0,
    });

    const [confirmed] = await events(order.order_id, 'order.confirmed');
    expect(confirmed!.data).toMatchObject({
      order_id: order.order_id,
      shift_id: shiftId,
      total_cents: 5000,
      paid_cents: 5000,
      balance_due_cents: 0,
      currency: 'USD',
      confirmed_unpaid: false,
    });
    expect((confirmed!.data as { tenders: { type: string }[] }).tenders.map((x) => x.type)).toEqual([
      'wallet',
      'gift_card',
      'cash',
      'card',
    ]);
    const [spent] = await events(payer.walletId, 'wallet.spent');
    expect(spent!.data).toMatchObject({
      amount_cents: 1000,
      balance_cents: 0,
      order_id: order.order_id,
      shift_id: shiftId,
    });
    const [redeemed] = await events(order.order_id, 'gift_card.redeemed');
    expect(redeemed!.data).toMatchObject({
      entity_type: 'order',
      gift_card_id: card.id,
      order_id: order.order_id,
      amount_cents: 1500,
    });
    expect(JSON.stringify(redeemed!.data)).not.toContain(card.code);
    const [funded] = await events(loaded.walletId, 'wallet.funded');
    expect(funded!.data).toMatchObject({
      channel: 'pos',
      amount_cents: 2000,
      balance_cents: 2000,
      order_id: order.order_id,
    });
    expect(await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: card.id } })).toMatchObject({
      balanceCents: 500,
      heldCents: 0,
    });

    const again = await request(t.app).post(`/api/pos/orders/${order.order_id}/settle`).set(staff()).send({});
    expect([again.status, again.body.error]).toEqual([409, 'order_not_open']);
    const late = await tender(order.order_id, { type: 'cash', amount_cents: 1 });
    expect(late.body.error).toBe('order_not_open');
  });

  it('when a manager confirms an order its tenders do not cover, then it says so; staff are refused, and a wallet load is never funded unpaid', async () => {
    const order = await openOrder([product(2000)]);
    await tender(order.order_id, { type: 'cash', amount_cents: 500 });
    const short = await request(t.app).post(`/api/pos/orders/${order.order_id}/settle`).set(staff()).send({});
    expect(short.body).toMatchObject({ error: 'order_not_fully_paid', detail: { balance_due_cents: 1500 } });
    const forbidden = await request(t.app)
      .post(`/api/pos/orders/${order.order_id}/settle`)
      .set(staff())
      .send({ unpaid: true });
    expect(forbidden.status).toBe(403);
    const unpaid = await request(t.app)
      .post(`/api/pos/orders/${order.order_id}/settle`)
      .set(manager())
      .send({ unpaid: true });
    expect(unpaid.body).toMatchObject({
      status: 'confirmed',
      confirmed_unpaid: true,
      balance_due_cents: 1500,
      paid_cents: 500,
    });
    const [confirmed] = await events(order.order_id, 'order.confirmed');
    expect(confirmed!.data).toMatchObject({ confirmed_unpaid: true, balance_due_cents: 1500 });

    const loaded = await fundedWallet(0);
    const load = await openOrder([{ type: 'wallet_load', wallet_id: loaded.walletId, amount_cents: 1000 }]);
    const refused = await request(t.app)
      .post(`/api/pos/orders/${load.order_id}/settle`)
      .set(manager())
      .send({ unpaid: true });
    expect([refused.status, refused.body.error]).toEqual([409, 'wallet_load_unpaid']);
    expect(await events(loaded.walletId, 'wallet.funded')).toHaveLength(0);
  });
});

describe('bad tenders and orders', () => {
  it('when a request is wrong, then a documented 4xx and nothing held', async () => {
    const payer = await fundedWallet(500);
    const euro = await fundedWallet(500, 'EUR');
    const order = await openOrder([product(1000)]);
    const cases: [object, number, string][] = [
      [{ type: 'cash', amount_cents: 0 }, 400, 'invalid_body'],
      [{ type: 'cash', amount_cents: -5 }, 400, 'invalid_body'],
      [{ type: 'cash', amount_cents: 1001 }, 400, 'tenders_exceed_total'],
      [{ type: 'wallet', amount_cents: 100 }, 400, 'invalid_body'],
      [{ type: 'cash', amount_cents: 100, wallet_token: payer.secret }, 400, 'invalid_body'],
      [{ type: 'wallet', amount_cents: 100, wallet_token: 'WNOPE-NOPE-NOPE-NOPE-NOPE' }, 400, 'wallet_token_invalid'],
      [{ type: 'wallet', amount_cents: 100, wallet_token: euro.secret }, 400, 'wallet_currency_mismatch'],
      [{ type: 'wallet', amount_cents: 600, wallet_token: payer.secret }, 409, 'insufficient_wallet_balance'],
      [{ type: 'gift_card', amount_cents: 100, gift_card_code: 'ZZZZ-ZZZZ-ZZZZ-ZZZZ' }, 400, 'gift_card_not_found'],
      [{ type: 'card', amount_cents: 100, payment_reference: 'pi_unknown' }, 400, 'payment_reference_invalid'],
    ];
    for (const [body, status, code] of cases) {
      const res = await tender(order.order_id, body);
      expect([JSON.stringify(body), res.status, res.body.error]).toEqual([JSON.stringify(body), status, code]);
    }
    // A card payment made for another order is not this order's.
    const otherOrder = await openOrder([product(100)]);
    const foreign = await tender(order.order_id, {
      type: 'card',
      amount_cents: 100,
      payment_reference: await cardPayment(otherOrder.order_id, 100),
    });
    expect(foreign.body.error).toBe('payment_reference_invalid');

    await request(t.app)
      .post(`/api/v1/wallets/${payer.walletId}/tokens/${payer.tokenId}/revoke`)
      .set(manager())
      .send({});
    const revoked = await tender(order.order_id, { type: 'wallet', amount_cents: 100, wallet_token: payer.secret });
    expect([revoked.status, revoked.body.error]).toEqual([409, 'wallet_token_revoked']);
    expect(await t.deps.db.wallet.findUniqueOrThrow({ where: { id: payer.walletId } })).toMatchObject({ heldCents: 0 });

    const unknown = await tender(randomUUID(), { type: 'cash', amount_cents: 1 });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'order_not_found']);
    const other = await seedTenant(t.deps);
    const foreignOrder = await request(t.app)
      .post(`/api/pos/orders/${order.order_id}/settle`)
      .set({ Authorization: `Bearer ${other.api_keys.staff}` })
      .send({});
    expect(foreignOrder.body.error).toBe('order_not_found');

    for (const lines of [[], [product(-1)], [{ ...product(100), quantity: 0 }]]) {
      const res = await request(t.app)
        .post('/api/pos/orders')
        .set(staff())
        .send({ shift_id: shiftId, currency: 'USD', lines });
      expect([res.status, res.body.error]).toEqual([400, 'invalid_body']);
    }
    const wrongWallet = await request(t.app)
      .post('/api/pos/orders')
      .set(staff())
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [{ type: 'wallet_load', wallet_id: euro.walletId, amount_cents: 100 }],
      });
    expect(wrongWallet.body.error).toBe('wallet_currency_mismatch');
  });

  it('when the shift is closed, then the till takes no order and no tender', async () => {
    const own = await seedTenant(t.deps);
    const auth = { Authorization: `Bearer ${own.api_keys.staff}` };
    const shift = await request(t.app).post('/api/pos/shifts/open').set(auth).send({ starting_cash_cents: 0 });
    const order = await request(t.app)
      .post('/api/pos/orders')
      .set(auth)
      .send({ shift_id: shift.body.shift_id, currency: 'USD', lines: [product(700)] });
    await request(t.app)
      .post(`/api/pos/orders/${order.body.order_id}/tenders`)
      .set(auth)
      .send({ type: 'cash', amount_cents: 700 });
    await request(t.app).post(`/api/pos/orders/${order.body.order_id}/settle`).set(auth).send({});
    const stillOpen = await request(t.app)
      .post('/api/pos/orders')
      .set(auth)
      .send({ shift_id: shift.body.shift_id, currency: 'USD', lines: [product(100)] });
    const closed = await request(t.app)
      .post('/api/pos/shifts/close')
      .set({ Authorization: `Bearer ${own.api_keys.manager}` })
      .send({ shift_id: shift.body.shift_id, counted_cash_cents: 700 });
    // The order's cash is counted: no variance.
    expect(closed.body).toMatchObject({ collected_cash_cents: 700, expected_cash_cents: 700, variance_cents: 0 });

    const refusedOrder = await request(t.app)
      .post('/api/pos/orders')
      .set(auth)
      .send({ shift_id: shift.body.shift_id, currency: 'USD', lines: [product(100)] });
    expect([refusedOrder.status, refusedOrder.body.error]).toEqual([409, 'shift_closed']);
    const refusedTender = await request(t.app)
      .post(`/api/pos/orders/${stillOpen.body.order_id}/tenders`)
      .set(auth)
      .send({ type: 'cash', amount_cents: 100 });
    expect([refusedTender.status, refusedTender.body.error]).toEqual([409, 'shift_closed']);
  });
});

describe('voiding', () => {
  it('when an order with wallet, gift card, cash and card tenders is voided, then holds are released and the card payment is refunded', async () => {
    const payer = await fundedWallet(800);
    const card = await giftCard(900);
    const order = await openOrder([product(3000)]);
    await tender(order.order_id, { type: 'wallet', amount_cents: 800, wallet_token: payer.secret });
    await tender(order.order_id, { type: 'gift_card', amount_cents: 900, gift_card_code: card.code });
    await tender(order.order_id, { type: 'cash', amount_cents: 300 });
    const reference = await cardPayment(order.order_id, 1000);
    await tender(order.order_id, { type: 'card', amount_cents: 1000, payment_reference: reference });

    const voided = await request(t.app).post(`/api/pos/orders/${order.order_id}/void`).set(staff());
    expect(voided.status).toBe(200);
    expect(voided.body.status).toBe('voided');
    expect(voided.body.tenders.every((x: { status: string }) => x.status === 'released')).toBe(true);
    expect(await t.deps.db.wallet.findUniqueOrThrow({ where: { id: payer.walletId } })).toMatchObject({
      balanceCents: 800,
      heldCents: 0,
    });
    expect(await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: card.id } })).toMatchObject({
      balanceCents: 900,
      heldCents: 0,
    });
    expect(fake.refunds.filter((r) => r.payment_intent === reference)).toHaveLength(1);
    const [refund] = await events(order.order_id, 'refund.created');
    expect(refund!.data).toMatchObject({ entity_type: 'order', payment_intent_id: reference, amount_cents: 1000 });
    expect(await events(payer.walletId, 'wallet.spent')).toHaveLength(0);
  });

  it('when an open order is older than POS_ORDER_HOLD_HOURS, then the job voids it and releases its holds', async () => {
    const payer = await fundedWallet(400);
    const order = await openOrder([product(400)]);
    await tender(order.order_id, { type: 'wallet', amount_cents: 400, wallet_token: payer.secret });
    await t.deps.db.order.update({
      where: { id: order.order_id },
      data: { createdAt: new Date(Date.now() - 25 * 3_600_000) },
    });
    expect(await voidAbandonedOrders(t.deps)).toBeGreaterThanOrEqual(1);
    expect((await t.deps.db.order.findUniqueOrThrow({ where: { id: order.order_id } })).status).toBe('voided');
    expect(await t.deps.db.wallet.findUniqueOrThrow({ where: { id: payer.walletId } })).toMatchObject({ heldCents: 0 });
  });
});

describe('races at the till', () => {
  it('when two tills (two API replicas) tender one wallet’s whole last value at once, then one holds it, the other is 409, and the balance never goes below zero', async () => {
    const second = createTestApp(stripeEnv(fake.url));
    try {
      for (let round = 0; round < 5; round += 1) {
        const payer = await fundedWallet(1200);
        const a = await openOrder([product(1200)]);
        const b = await openOrder([product(1200)], second);
        const answers = await Promise.all([
          tender(a.order_id, { type: 'wallet', amount_cents: 1200, wallet_token: payer.secret }),
          tender(b.order_id, { type: 'wallet', amount_cents: 1200, wallet_token: payer.secret }, second),
        ]);
        expect(answers.map((x) => x.status).sort()).toEqual([201, 409]);
        expect(answers.find((x) => x.status === 409)!.body.error).toBe('insufficient_wallet_balance');
        const winner = answers[0]!.status === 201 ? a : b;
        await request(t.app).post(`/api/pos/orders/${winner.order_id}/settle`).set(staff()).send({});
        expect(await t.deps.db.wallet.findUniqueOrThrow({ where: { id: payer.walletId } })).toMatchObject({
          balanceCents: 0,
          heldCents: 0,
        });
        expect(await events(payer.walletId, 'wallet.spent')).toHaveLength(1);
      }
    } finally {
      await second.close();
    }
  });

  it('when settle and void race on one order, then exactly one wins and the wallet hold is captured or released, never both', async () => {
    for (let round = 0; round < 8; round += 1) {
      const payer = await fundedWallet(600);
      const order = await openOrder([product(600)]);
      await tender(order.order_id, { type: 'wallet', amount_cents: 600, wallet_token: payer.secret });
      const [settled, voided] = await Promise.all([
        request(t.app).post(`/api/pos/orders/${order.order_id}/settle`).set(staff()).send({}),
        request(t.app).post(`/api/pos/orders/${order.order_id}/void`).set(staff()),
      ]);
      expect([settled.status, voided.status].sort()).toEqual([200, 409]);
      const wallet = await t.deps.db.wallet.findUniqueOrThrow({ where: { id: payer.walletId } });
      expect(wallet.heldCents).toBe(0);
      expect(wallet.balanceCents).toBe(settled.status === 200 ? 0 : 600);
    }
  });

  it('when a till order holds a gift card’s value, then a booking can spend only what is left', async () => {
    const card = await giftCard(1000);
    const order = await openOrder([product(1000)]);
    await tender(order.order_id, { type: 'gift_card', amount_cents: 1000, gift_card_code: card.code });
    await expect(createBooking(t, demo, { giftCardCode: card.code })).rejects.toThrow(/gift_card_empty/);
    expect(await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: card.id } })).toMatchObject({
      balanceCents: 1000,
      heldCents: 1000,
    });
  });
});
