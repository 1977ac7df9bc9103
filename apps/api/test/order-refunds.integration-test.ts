import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  openShift,
  paidWalletTopUp,
  postWalletTopUp,
  seedGiftCard,
  seedTenant,
  SHORT_DEADLINE_ENV,
  signedChargeRefundedEvent,
  signedDisputeCreatedEvent,
  startStripeTestApp,
  stopStripeTestApp,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  tillCardPayment,
} from '@booking/test-kit';

// Refunds of orders on the real PostgreSQL and Redis with the fake Stripe: online top-ups (the
// funding taken back as far as it is still there), every tender of a till order, refunds and
// disputes made at the provider, and a refund racing a spend of the same wallet.

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

/** A paid online top-up: its order, wallet and PaymentIntent. */
async function paidTopUp(amountCents: number) {
  const paid = await paidWalletTopUp(t, fake, demo, amountCents, {
    email: `refund-${randomUUID()}@example.com`,
    first_name: 'Rae',
  });
  const token = await request(t.app)
    .post(`/api/v1/wallets/${paid.walletId}/tokens`)
    .set(as('staff'))
    .send({ kind: 'qr' });
  return { ...paid, secret: token.body.secret as string };
}

/** Spends `cents` of a wallet at the till: an order settled by a wallet tender. */
async function spend(secret: string, cents: number) {
  const order = await request(t.app)
    .post('/api/pos/orders')
    .set(as('staff'))
    .send({
      shift_id: shiftId,
      currency: 'USD',
      lines: [{ type: 'product', description: 'cake', quantity: 1, unit_price_cents: cents }],
    });
  const tender = await request(t.app)
    .post(`/api/pos/orders/${order.body.order_id}/tenders`)
    .set(as('staff'))
    .send({ type: 'wallet', amount_cents: cents, wallet_token: secret });
  if (tender.status !== 201) return tender;
  return request(t.app).post(`/api/pos/orders/${order.body.order_id}/settle`).set(as('staff')).send({});
}

const refund = (orderId: string, body: object, role: 'manager' | 'admin' = 'manager') =>
  request(t.app).post(`/api/v1/orders/${orderId}/refunds`).set(as(role)).send(body);
const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });
const wallet = (id: string) => t.deps.db.wallet.findUniqueOrThrow({ where: { id } });

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

describe('refunding an online top-up', () => {
  it('when its value is unspent, then Stripe refunds it, refund.created, and wallet.funding_returned takes it all back', async () => {
    const topUp = await paidTopUp(4000);
    const res = await refund(topUp.orderId, { amount_cents: 1500, reason: 'asked' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'succeeded',
      amount_cents: 1500,
      debited_cents: 1500,
      shortfall_cents: 0,
    });
    expect(fake.refunds.filter((r) => r.payment_intent === topUp.intent.id).map((r) => r.amount)).toEqual([1500]);
    const [created] = await events(topUp.orderId, 'refund.created');
    expect(created!.data).toMatchObject({
      entity_type: 'order',
      amount_cents: 1500,
      payment_intent_id: topUp.intent.id,
    });
    const [returned] = await events(topUp.walletId, 'wallet.funding_returned');
    expect(returned!.data).toMatchObject({
      amount_cents: 1500,
      debited_cents: 1500,
      shortfall_cents: 0,
      balance_cents: 2500,
      channel: 'online',
      reason: 'refund',
    });
    expect(await events(topUp.walletId, 'wallet.refund_review_required')).toHaveLength(0);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 2500, heldCents: 0 });
    const over = await refund(topUp.orderId, { amount_cents: 2501 });
    expect([over.status, over.body.error, over.body.detail.refundable_cents]).toEqual([
      400,
      'refund_exceeds_paid',
      2500,
    ]);
    await ledgerAgrees(topUp.walletId);
  });

  it('when part was spent, then a manager is refused, an admin may allow the shortfall, and wallet.refund_review_required says what was spent', async () => {
    const topUp = await paidTopUp(3000);
    expect((await spend(topUp.secret, 1800)).status).toBe(200);
    const refused = await refund(topUp.orderId, { amount_cents: 3000 });
    expect(refused.body).toMatchObject({ error: 'refund_exceeds_available', detail: { available_cents: 1200 } });
    const managerShortfall = await refund(topUp.orderId, { amount_cents: 3000, allow_shortfall: true });
    expect(managerShortfall.status).toBe(403);
    const res = await refund(topUp.orderId, { amount_cents: 3000, allow_shortfall: true }, 'admin');
    expect(res.body).toMatchObject({ status: 'succeeded', debited_cents: 1200, shortfall_cents: 1800 });
    const [review] = await events(topUp.walletId, 'wallet.refund_review_required');
    expect(review!.data).toMatchObject({
      amount_cents: 3000,
      debited_cents: 1200,
      shortfall_cents: 1800,
      reason: 'refund',
    });
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 0, heldCents: 0 });
    await ledgerAgrees(topUp.walletId);
  });

  it('when Stripe refuses the refund, then 502, the held value is released and nothing is recorded as refunded', async () => {
    const topUp = await paidTopUp(2000);
    // Refunded in Stripe's dashboard before any notification arrived: Stripe refuses a second one.
    await t.deps.stripe!.refunds.create({ payment_intent: topUp.intent.id });
    const res = await refund(topUp.orderId, { amount_cents: 500 });
    expect([res.status, res.body.error]).toEqual([502, 'payment_provider_error']);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 2000, heldCents: 0 });
    const order = await t.deps.db.order.findUniqueOrThrow({ where: { id: topUp.orderId }, include: { refunds: true } });
    expect(order.refundedCents).toBe(0);
    expect(order.refunds.map((r) => r.status)).toEqual(['failed']);
    expect(await events(topUp.orderId, 'refund.created')).toHaveLength(0);
  });

  it('when Stripe does not answer, then 409 refund_in_progress, the value stays held, and the refund notification settles it', async () => {
    const topUp = await paidTopUp(2000);
    fake.failNextRefunds(3);
    const res = await refund(topUp.orderId, { amount_cents: 700 });
    expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 2000, heldCents: 700 });
    // Stripe made it after all and reports it.
    const made = await t.deps.stripe!.refunds.create({
      payment_intent: topUp.intent.id,
      amount: 700,
      metadata: { order_refund_id: res.body.detail.refund_id },
    });
    const notified = signedChargeRefundedEvent(topUp.intent, [made as never], { secret: TEST_WEBHOOK_SECRET });
    await Promise.all([deliverStripeEvent(t, notified), deliverStripeEvent(t, notified)]);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 1300, heldCents: 0 });
    expect(await events(topUp.walletId, 'wallet.funding_returned')).toHaveLength(1);
    await ledgerAgrees(topUp.walletId);
  });
});

describe('a retry of a refund whose first run reserved it and then failed', () => {
  it('when the first run got Stripe to refund after its deadline answered 503, then its retry settles that refund and pays out nothing more', async () => {
    const slow = createTestApp({ ...stripeEnv(fake.url), ...SHORT_DEADLINE_ENV });
    try {
      const topUp = await paidTopUp(4000);
      const send = () =>
        request(slow.app)
          .post(`/api/v1/orders/${topUp.orderId}/refunds`)
          .set(as('manager'))
          .set('Idempotency-Key', `refund-${topUp.orderId}`)
          .send({ amount_cents: 1500 });
      fake.delayNextRefunds(1, 1_500);

      expect((await send()).status).toBe(503);
      // Stripe refunds at 1.5 s, too late for the first run to record it; its key leaves flight at 2 s.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const retry = await send();

      expect([retry.status, retry.body.status, retry.headers['idempotent-replayed']]).toEqual([
        201,
        'succeeded',
        'true',
      ]);
      expect(fake.refunds.filter((r) => r.payment_intent === topUp.intent.id).map((r) => r.amount)).toEqual([1500]);
      const refunds = await t.deps.db.orderRefund.findMany({ where: { orderId: topUp.orderId } });
      expect(refunds.map((r) => [r.id, r.status, r.amountCents])).toEqual([[retry.body.refund_id, 'succeeded', 1500]]);
      expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 2500, heldCents: 0 });
      await ledgerAgrees(topUp.walletId);
    } finally {
      fake.delayNextRefunds(0, 0);
      await slow.close();
    }
  });
});

describe('refunds and disputes made at the provider', () => {
  it('when a top-up is refunded in the Stripe dashboard after part was spent, then the wallet gives back what it has and review is required, once', async () => {
    const topUp = await paidTopUp(2500);
    await spend(topUp.secret, 2000);
    const made = await t.deps.stripe!.refunds.create({ payment_intent: topUp.intent.id, amount: 2500 });
    const notified = signedChargeRefundedEvent(topUp.intent, [made as never], { secret: TEST_WEBHOOK_SECRET });
    await Promise.all([deliverStripeEvent(t, notified), deliverStripeEvent(t, notified)]);
    await deliverStripeEvent(
      t,
      signedChargeRefundedEvent(topUp.intent, [made as never], { secret: TEST_WEBHOOK_SECRET }),
    );
    const [returned] = await events(topUp.walletId, 'wallet.funding_returned');
    expect(await events(topUp.walletId, 'wallet.funding_returned')).toHaveLength(1);
    expect(returned!.data).toMatchObject({
      amount_cents: 2500,
      debited_cents: 500,
      shortfall_cents: 2000,
      reason: 'refund',
    });
    expect(await events(topUp.walletId, 'wallet.refund_review_required')).toHaveLength(1);
    expect(await events(topUp.orderId, 'refund.created')).toHaveLength(1);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 0 });
    await ledgerAgrees(topUp.walletId);
  });

  it('when the payer disputes a top-up, then the funding is taken back with reason dispute', async () => {
    const topUp = await paidTopUp(1600);
    await deliverStripeEvent(t, signedDisputeCreatedEvent(topUp.intent, 1600, { secret: TEST_WEBHOOK_SECRET }));
    const [returned] = await events(topUp.walletId, 'wallet.funding_returned');
    expect(returned!.data).toMatchObject({
      amount_cents: 1600,
      debited_cents: 1600,
      shortfall_cents: 0,
      reason: 'dispute',
    });
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 0 });
  });
});

describe('refunding a till order', () => {
  it('when each tender is refunded, then the wallet is credited (wallet.refunded), the card is refunded at Stripe, the gift card and the cash go back', async () => {
    const payer = await paidTopUp(1000);
    const card = await seedGiftCard(t, demo, 900);
    const order = await request(t.app)
      .post('/api/pos/orders')
      .set(as('staff'))
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [{ type: 'product', description: 'kit', quantity: 1, unit_price_cents: 4000 }],
      });
    const id = order.body.order_id as string;
    const intent = await tillCardPayment(t, fake, demo, id, 1100);
    for (const body of [
      { type: 'wallet', amount_cents: 1000, wallet_token: payer.secret },
      { type: 'gift_card', amount_cents: 900, gift_card_code: card.code },
      { type: 'cash', amount_cents: 1000 },
      { type: 'card', amount_cents: 1100, payment_reference: intent.id },
    ]) {
      expect((await request(t.app).post(`/api/pos/orders/${id}/tenders`).set(as('staff')).send(body)).status).toBe(201);
    }
    const settled = await request(t.app).post(`/api/pos/orders/${id}/settle`).set(as('staff')).send({});
    const tenderOf = (type: string) =>
      settled.body.tenders.find((x: { type: string }) => x.type === type).tender_id as string;

    const missing = await refund(id, { amount_cents: 100 });
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_body']);
    const toWallet = await refund(id, { amount_cents: 400, tender_id: tenderOf('wallet'), reason: 'faulty' });
    expect(toWallet.body).toMatchObject({ status: 'succeeded', amount_cents: 400 });
    const [credited] = await events(payer.walletId, 'wallet.refunded');
    expect(credited!.data).toMatchObject({
      amount_cents: 400,
      balance_cents: 400,
      tender_id: tenderOf('wallet'),
      reason: 'faulty',
    });
    const toCard = await refund(id, { amount_cents: 1100, tender_id: tenderOf('card') });
    expect(toCard.body).toMatchObject({ status: 'succeeded' });
    expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
    expect((await events(id, 'refund.created')).map((e) => (e.data as { amount_cents: number }).amount_cents)).toEqual([
      1100,
    ]);
    await refund(id, { amount_cents: 900, tender_id: tenderOf('gift_card') });
    expect((await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: card.id } })).balanceCents).toBe(900);
    const cash = await refund(id, { amount_cents: 300, tender_id: tenderOf('cash') });
    expect(cash.body).toMatchObject({ status: 'succeeded' });
    const over = await refund(id, { amount_cents: 701, tender_id: tenderOf('cash') });
    expect([over.body.error, over.body.detail.refundable_cents]).toEqual(['refund_exceeds_paid', 700]);
    const unknown = await refund(id, { amount_cents: 1, tender_id: randomUUID() });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'tender_not_found']);
    expect(
      (await request(t.app).post(`/api/v1/orders/${id}/refunds`).set(as('staff')).send({ amount_cents: 1 })).status,
    ).toBe(403);
    for (const amount of [0, -1, 1.5]) {
      expect((await refund(id, { amount_cents: amount, tender_id: tenderOf('cash') })).body.error).toBe('invalid_body');
    }
    const view = await request(t.app).get(`/api/v1/orders/${id}`).set(as('staff'));
    expect(view.body).toMatchObject({ refunded_cents: 2700, status: 'confirmed' });
  });

  it('when a wallet load is refunded, then its funding is taken back, refused above what is left unless an admin allows it', async () => {
    const target = await paidTopUp(100);
    const order = await request(t.app)
      .post('/api/pos/orders')
      .set(as('staff'))
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [{ type: 'wallet_load', wallet_id: target.walletId, amount_cents: 2000 }],
      });
    const id = order.body.order_id as string;
    await request(t.app)
      .post(`/api/pos/orders/${id}/tenders`)
      .set(as('staff'))
      .send({ type: 'cash', amount_cents: 2000 });
    const settled = await request(t.app).post(`/api/pos/orders/${id}/settle`).set(as('staff')).send({});
    const line = settled.body.lines[0].line_id as string;
    const tender = settled.body.tenders[0].tender_id as string;
    await spend(target.secret, 1500);

    const refused = await refund(id, { amount_cents: 2000, tender_id: tender, line_id: line });
    expect(refused.body).toMatchObject({ error: 'refund_exceeds_available', detail: { available_cents: 600 } });
    const res = await refund(
      id,
      { amount_cents: 2000, tender_id: tender, line_id: line, allow_shortfall: true },
      'admin',
    );
    expect(res.body).toMatchObject({ debited_cents: 600, shortfall_cents: 1400, status: 'succeeded' });
    const [returned] = await events(target.walletId, 'wallet.funding_returned');
    expect(returned!.data).toMatchObject({ channel: 'pos', debited_cents: 600, shortfall_cents: 1400 });
    expect(await events(target.walletId, 'wallet.refund_review_required')).toHaveLength(1);
    await ledgerAgrees(target.walletId);
  });

  it('when an order is not confirmed or paid, then its refund is 409 order_not_refundable; an unknown order is 404', async () => {
    const open = await request(t.app)
      .post('/api/pos/orders')
      .set(as('staff'))
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [{ type: 'product', description: 'x', quantity: 1, unit_price_cents: 100 }],
      });
    await request(t.app)
      .post(`/api/pos/orders/${open.body.order_id}/tenders`)
      .set(as('staff'))
      .send({ type: 'cash', amount_cents: 100 });
    await request(t.app).post(`/api/pos/orders/${open.body.order_id}/void`).set(as('staff'));
    const voided = await refund(open.body.order_id, { amount_cents: 100 });
    expect([voided.status, voided.body.error]).toEqual([409, 'order_not_refundable']);
    const pending = await postWalletTopUp(t, demo, 500, { email: `p-${randomUUID()}@example.com`, first_name: 'P' });
    const notPaid = await refund(pending.body.order_id, { amount_cents: 100 });
    expect([notPaid.status, notPaid.body.error]).toEqual([409, 'order_not_refundable']);
    const unknown = await refund(randomUUID(), { amount_cents: 100 });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'order_not_found']);
  });
});

describe('races', () => {
  it('when a refund of a top-up races a spend of the same wallet, then the balance never goes below zero, the ledger agrees, and debited + shortfall = refunded', async () => {
    for (let round = 0; round < 6; round += 1) {
      const topUp = await paidTopUp(1000);
      // Each round sends the refund a little later, so the two meet at different points.
      const refundLater = async () => {
        await new Promise((resolve) => setTimeout(resolve, round * 6));
        return refund(topUp.orderId, { amount_cents: 1000, allow_shortfall: true }, 'admin');
      };
      const [refunded, spent] = await Promise.all([refundLater(), spend(topUp.secret, 1000)]);
      expect(refunded.status).toBe(201);
      expect(refunded.body.debited_cents + refunded.body.shortfall_cents).toBe(1000);
      // Whichever locked the wallet first decided: the spend took it all, or the refund did.
      if (spent.status === 200) expect(refunded.body.debited_cents).toBe(0);
      else
        expect([spent.status, spent.body.error, refunded.body.debited_cents]).toEqual([
          409,
          'insufficient_wallet_balance',
          1000,
        ]);
      expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 0, heldCents: 0 });
      await ledgerAgrees(topUp.walletId);
    }
  });

  it('when two refunds of the whole top-up are sent at once without a key, then only one goes through', async () => {
    const topUp = await paidTopUp(900);
    const answers = await Promise.all([
      refund(topUp.orderId, { amount_cents: 900 }),
      refund(topUp.orderId, { amount_cents: 900 }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 400]);
    expect(fake.refunds.filter((r) => r.payment_intent === topUp.intent.id)).toHaveLength(1);
    await ledgerAgrees(topUp.walletId);
  });
});
