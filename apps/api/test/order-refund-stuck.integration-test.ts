import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type Stripe from 'stripe';
import type { DemoTenant } from '@booking/db';
import {
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  openShift,
  openTillOrder,
  paidWalletTopUp,
  type RefundObject,
  seedTenant,
  signedChargeRefundedEvent,
  startStripeTestApp,
  stopStripeTestApp,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  tillCardPayment,
} from '@booking/test-kit';
import { settleStuckOrderRefunds } from '../src/orders/settle-stuck-order-refunds';

// Operator refunds of orders that Stripe never answered about, on the real PostgreSQL and Redis
// with the fake Stripe: the settle-stuck-order-refunds job settles each once, from Stripe's record
// of it or by asking again under the same key, and runs on two processes at once share them.

let fake: FakeStripe;
let t: TestApp;
let replica: TestApp;
let demo: DemoTenant;
let shiftId: string;
const as = (role: 'staff' | 'manager') => ({ Authorization: `Bearer ${demo.api_keys[role]}` });

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  replica = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
  shiftId = await openShift(t, demo);
});
afterEach(() => {
  fake.failNextRefunds(0);
  fake.rateLimitNextRefunds(0);
  jest.restoreAllMocks();
});
afterAll(async () => {
  await replica.close();
  await stopStripeTestApp(t, fake);
});

const refund = (orderId: string, body: object) =>
  request(t.app).post(`/api/v1/orders/${orderId}/refunds`).set(as('manager')).send(body);
const refundRow = (id: string) => t.deps.db.orderRefund.findUniqueOrThrow({ where: { id } });
const wallet = (id: string) => t.deps.db.wallet.findUniqueOrThrow({ where: { id } });
const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });
const refundsOf = (intentId: string) => fake.refunds.filter((made) => made.payment_intent === intentId);
/** Requests to Stripe about the payment's refunds: asked for (POST) and listed (GET). */
const calls = (intentId: string) =>
  ['POST', 'GET'].map(
    (method) => fake.requestsTo(method, '/v1/refunds').filter((call) => call.body.payment_intent === intentId).length,
  );
/** One run of the job, as the worker makes it on `app`'s process. */
const sweep = (warn = jest.fn(), app = t, now?: Date, signal?: AbortSignal) =>
  settleStuckOrderRefunds({ db: app.deps.db, stripe: app.deps.stripe, logger: { warn }, signal }, now);
/** As if the refund had been made, or last asked about, `minutes` ago. */
const aged = (refundId: string, minutes: number) =>
  t.deps.db.orderRefund.update({
    where: { id: refundId },
    data: { updatedAt: new Date(Date.now() - minutes * 60_000) },
  });

/** As if the refund had been made `hours` ago, and last asked about six minutes ago. */
const madeAgo = (refundId: string, hours: number) =>
  t.deps.db.orderRefund.update({
    where: { id: refundId },
    data: { createdAt: new Date(Date.now() - hours * 3_600_000), updatedAt: new Date(Date.now() - 6 * 60_000) },
  });
/** Runs `meanwhile` once the job's next listing of the intent's refunds at Stripe has been read through. */
function afterNextListing(intentId: string, meanwhile: () => Promise<unknown>) {
  const refunds = t.deps.stripe!.refunds;
  const list = refunds.list.bind(refunds);
  let done = false;
  return jest.spyOn(refunds, 'list').mockImplementation(((params?: Stripe.RefundListParams) => {
    const listed = list(params);
    if (done || params?.payment_intent !== intentId) return listed;
    done = true;
    return {
      async *[Symbol.asyncIterator]() {
        yield* listed;
        await meanwhile();
      },
    };
  }) as never);
}

const order = (id: string) => t.deps.db.order.findUniqueOrThrow({ where: { id } });

/** A paid online top-up, refunded in part while Stripe fails every try: the refund stays pending. */
async function stuckTopUpRefund(paidCents: number, refundCents: number) {
  const topUp = await paidWalletTopUp(t, fake, demo, paidCents, {
    email: `stuck-${randomUUID()}@example.com`,
    first_name: 'Sam',
  });
  // The first try and both of the SDK's retries.
  fake.failNextRefunds(3);
  const res = await refund(topUp.orderId, { amount_cents: refundCents });
  fake.failNextRefunds(0);
  expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
  const refundId = res.body.detail.refund_id as string;
  expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
  return { ...topUp, refundId };
}

describe('the settle-stuck-order-refunds job', () => {
  it('when a top-up refund never reached Stripe, then it stays pending, its value held, until the job asks again five minutes on and settles it once', async () => {
    const { orderId, walletId, intent, refundId } = await stuckTopUpRefund(2000, 700);
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 2000, heldCents: 700 });
    expect(refundsOf(intent.id)).toHaveLength(0);
    // What it reserved is not refundable again meanwhile.
    expect((await refund(orderId, { amount_cents: 1400 })).body.error).toBe('refund_exceeds_paid');

    // Its own request may still be at Stripe: not asked about yet.
    const before = calls(intent.id);
    await sweep();
    expect(calls(intent.id)).toEqual(before);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending' });

    await aged(refundId, 6);
    const warn = jest.fn();
    await sweep(warn);

    // Listed once (none there), then asked for once, under the refund's own key.
    expect(calls(intent.id)).toEqual([before[0]! + 1, before[1]! + 1]);
    const [made] = refundsOf(intent.id);
    expect(refundsOf(intent.id)).toEqual([
      expect.objectContaining({ amount: 700, metadata: expect.objectContaining({ order_refund_id: refundId }) }),
    ]);
    expect(fake.requestsTo('POST', '/v1/refunds').at(-1)!.idempotencyKey).toBe(`order-refund-${refundId}`);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made!.id });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 1300, heldCents: 0 });
    expect(await events(orderId, 'refund.created')).toHaveLength(1);
    expect(await events(walletId, 'wallet.funding_returned')).toHaveLength(1);
    expect(warn).not.toHaveBeenCalledWith(expect.objectContaining({ refund_id: refundId }), expect.anything());

    // Settled: another run, however late, leaves it alone.
    await aged(refundId, 60);
    await sweep();
    expect(calls(intent.id)).toEqual([before[0]! + 1, before[1]! + 1]);
    expect(await events(orderId, 'refund.created')).toHaveLength(1);
    expect(await events(walletId, 'wallet.funding_returned')).toHaveLength(1);
    expect((await refund(orderId, { amount_cents: 1300 })).status).toBe(201);
  });

  it('when a till card refund did reach Stripe though its answer was lost, then the job settles it from Stripe’s record and refunds nothing twice', async () => {
    const { order_id: orderId } = await openTillOrder(t, demo, shiftId, [
      { type: 'product', description: 'kite', quantity: 1, unit_price_cents: 1000 },
    ]);
    const intent = await tillCardPayment(t, fake, demo, orderId, 1000);
    const staff = as('staff');
    const tendered = await request(t.app)
      .post(`/api/pos/orders/${orderId}/tenders`)
      .set(staff)
      .send({ type: 'card', amount_cents: 1000, payment_reference: intent.id });
    expect(tendered.status).toBe(201);
    const settled = await request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(staff).send({});
    const tenderId = settled.body.tenders[0].tender_id as string;
    fake.failNextRefunds(3);
    const res = await refund(orderId, { amount_cents: 1000, tender_id: tenderId });
    fake.failNextRefunds(0);
    expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
    const refundId = res.body.detail.refund_id as string;
    // One of the tries had reached Stripe after all.
    const made = await t.deps.stripe!.refunds.create({
      payment_intent: intent.id,
      amount: 1000,
      metadata: { order_refund_id: refundId },
    });

    await aged(refundId, 6);
    const [posts] = calls(intent.id);
    await sweep();

    expect(calls(intent.id)[0]).toBe(posts);
    expect(refundsOf(intent.id)).toHaveLength(1);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    const tender = await t.deps.db.orderTender.findUniqueOrThrow({ where: { id: tenderId } });
    expect(tender.refundedCents).toBe(1000);
    expect((await events(orderId, 'refund.created')).map((event) => event.data)).toEqual([
      expect.objectContaining({ refund_id: refundId, amount_cents: 1000 }),
    ]);
  });

  it('when Stripe still does not answer about one refund, then the others of the run are settled and that one is put back five minutes, logged', async () => {
    const first = await stuckTopUpRefund(1000, 400);
    const second = await stuckTopUpRefund(1000, 400);
    await aged(first.refundId, 7);
    await aged(second.refundId, 6);
    // Whichever the run asks for first fails every try.
    fake.failNextRefunds(3);
    const now = new Date();
    const warn = jest.fn();
    await sweep(warn, t, now);

    const rows = await Promise.all([first, second].map(({ refundId }) => refundRow(refundId)));
    expect(rows.map((row) => row.status).sort()).toEqual(['pending', 'succeeded']);
    const left = rows.find((row) => row.status === 'pending')!;
    expect(left.updatedAt).toEqual(now);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ refund_id: left.id, err: expect.objectContaining({ code: 'refund_in_progress' }) }),
      'stuck order refund: not settled',
    );
    const stuck = [first, second].find(({ refundId }) => refundId === left.id)!;
    expect(await wallet(stuck.walletId)).toMatchObject({ balanceCents: 1000, heldCents: 400 });

    // Put back: the next run does not ask about it again before five minutes.
    const before = calls(stuck.intent.id);
    await sweep();
    expect(calls(stuck.intent.id)).toEqual(before);
    await aged(left.id, 6);
    await sweep();
    expect(await refundRow(left.id)).toMatchObject({ status: 'succeeded' });
    expect(refundsOf(stuck.intent.id)).toHaveLength(1);
    expect(await wallet(stuck.walletId)).toMatchObject({ balanceCents: 600, heldCents: 0 });
    expect(await events(stuck.orderId, 'refund.created')).toHaveLength(1);
  });

  it('when Stripe rate-limits the refund request, then it stays pending with its value held (409), and the refund an earlier try made is settled once from Stripe’s list', async () => {
    const topUp = await paidWalletTopUp(t, fake, demo, 2000, {
      email: `limited-${randomUUID()}@example.com`,
      first_name: 'Rae',
    });
    fake.rateLimitNextRefunds(1);
    const res = await refund(topUp.orderId, { amount_cents: 700 });
    expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
    const refundId = res.body.detail.refund_id as string;
    // A 429 says nothing of an earlier try under the same key: nothing is released.
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 2000, heldCents: 700 });
    expect(await order(topUp.orderId)).toMatchObject({ refundedCents: 700 });
    expect((await refund(topUp.orderId, { amount_cents: 1400 })).body.error).toBe('refund_exceeds_paid');
    // The try before the 429 had reached Stripe, its answer lost.
    const made = await t.deps.stripe!.refunds.create({
      payment_intent: topUp.intent.id,
      amount: 700,
      metadata: { order_refund_id: refundId },
    });

    await aged(refundId, 6);
    const [posts] = calls(topUp.intent.id);
    await sweep();

    expect(calls(topUp.intent.id)[0]).toBe(posts);
    expect(refundsOf(topUp.intent.id)).toHaveLength(1);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 1300, heldCents: 0 });
    expect(await order(topUp.orderId)).toMatchObject({ refundedCents: 700 });
    // Its notification, coming later, books nothing twice.
    const notified = signedChargeRefundedEvent(topUp.intent, [made as never], { secret: TEST_WEBHOOK_SECRET });
    expect((await deliverStripeEvent(t, notified)).status).toBe(200);
    expect(await events(topUp.orderId, 'refund.created')).toHaveLength(1);
    expect(await events(topUp.walletId, 'wallet.funding_returned')).toHaveLength(1);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 1300, heldCents: 0 });
    expect((await refund(topUp.orderId, { amount_cents: 1400 })).body.error).toBe('refund_exceeds_paid');
  });

  it('when Stripe shows the refund an earlier try made as canceled, then the job fails it and releases its value', async () => {
    const { orderId, walletId, intent, refundId } = await stuckTopUpRefund(1000, 400);
    const made = await t.deps.stripe!.refunds.create({
      payment_intent: intent.id,
      amount: 400,
      metadata: { order_refund_id: refundId },
    });
    fake.refunds.find((one) => one.id === made.id)!.status = 'canceled';

    await aged(refundId, 6);
    await sweep();

    expect(await refundRow(refundId)).toMatchObject({ status: 'failed', providerRefundId: made.id });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 1000, heldCents: 0 });
    expect(await order(orderId)).toMatchObject({ refundedCents: 0 });
    expect(await events(orderId, 'refund.created')).toHaveLength(0);
    expect(refundsOf(intent.id)).toHaveLength(1);
  });

  it('when Stripe does not know the payment (the service’s key is another account’s or mode’s), then the job leaves the refund pending with its value held, logs it, looks again five minutes on and never asks for it again, and its notification settles it once', async () => {
    const { orderId, walletId, intent, refundId } = await stuckTopUpRefund(1000, 400);
    fake.forgetIntent(intent.id);
    const [posts, lists] = calls(intent.id);

    await aged(refundId, 6);
    const warn = jest.fn();
    const now = new Date();
    await sweep(warn, t, now);

    // The refund may exist on the account the key no longer sees: nothing is failed or released.
    expect(calls(intent.id)).toEqual([posts, lists! + 1]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null, updatedAt: now });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 1000, heldCents: 400 });
    expect(await order(orderId)).toMatchObject({ refundedCents: 400 });
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({
        refund_id: refundId,
        err: expect.objectContaining({
          code: 'refund_in_progress',
          detail: expect.objectContaining({ message: expect.stringContaining('does not know the payment') }),
        }),
      }),
      'stuck order refund: not settled',
    );
    expect((await refund(orderId, { amount_cents: 1000 })).body.error).toBe('refund_exceeds_paid');

    // Put back five minutes, then looked up again, still never asked for.
    await sweep();
    expect(calls(intent.id)).toEqual([posts, lists! + 1]);
    await aged(refundId, 6);
    await sweep();
    expect(calls(intent.id)).toEqual([posts, lists! + 2]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending' });

    // It had been made on the account the key used to be of; its notification settles it, once.
    const made = {
      id: `re_live_${randomUUID().replaceAll('-', '')}`,
      object: 'refund' as const,
      status: 'succeeded' as const,
      amount: 400,
      currency: intent.currency,
      payment_intent: intent.id,
      metadata: { order_refund_id: refundId },
    };
    const notified = signedChargeRefundedEvent(intent, [made], { secret: TEST_WEBHOOK_SECRET });
    expect((await deliverStripeEvent(t, notified)).status).toBe(200);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 600, heldCents: 0 });
    expect(await order(orderId)).toMatchObject({ refundedCents: 400 });
    expect(await events(orderId, 'refund.created')).toHaveLength(1);
  });

  it('when two processes run the job at once, then each stuck refund is listed and asked for once, and settled once', async () => {
    const stuck = [];
    // One after the other: Stripe's failures are counted across requests.
    for (let made = 0; made < 4; made += 1) stuck.push(await stuckTopUpRefund(900, 300));
    await Promise.all(stuck.map(({ refundId }) => aged(refundId, 6)));
    const before = stuck.map(({ intent }) => calls(intent.id));

    await Promise.all([sweep(jest.fn(), t), sweep(jest.fn(), replica)]);

    for (const [index, { intent, refundId, orderId, walletId }] of stuck.entries()) {
      expect(calls(intent.id)).toEqual([before[index]![0]! + 1, before[index]![1]! + 1]);
      expect(refundsOf(intent.id)).toHaveLength(1);
      expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
      expect(await events(orderId, 'refund.created')).toHaveLength(1);
      expect(await wallet(walletId)).toMatchObject({ balanceCents: 600, heldCents: 0 });
    }
  });
});

describe('the settle-stuck-order-refunds job, for refunds made more than 23 hours ago or settled meanwhile', () => {
  it('when Stripe shows none (it may have forgotten the key), then the job does not ask for it again: it stays pending with its value held, logged once each time it comes up, and is settled once Stripe lists it as ours', async () => {
    const { orderId, walletId, intent, refundId } = await stuckTopUpRefund(1500, 500);
    await madeAgo(refundId, 24);
    const before = calls(intent.id);
    const warn = jest.fn();

    await sweep(warn);

    expect(calls(intent.id)).toEqual([before[0], before[1]! + 1]);
    expect(refundsOf(intent.id)).toHaveLength(0);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 1500, heldCents: 500 });
    const aboutIt = warn.mock.calls.filter(([fields]) => (fields as { refund_id?: string }).refund_id === refundId);
    expect(aboutIt).toEqual([
      [
        expect.objectContaining({ order_id: orderId }),
        expect.stringContaining('may have forgotten its key, so it is not sent again'),
      ],
    ]);

    // Next time it comes up, an earlier try's refund is listed: settled from it, nothing sent.
    const made = await t.deps.stripe!.refunds.create({
      payment_intent: intent.id,
      amount: 500,
      metadata: { order_refund_id: refundId },
    });
    await aged(refundId, 6);
    const [posts] = calls(intent.id);
    await sweep();
    expect(calls(intent.id)[0]).toBe(posts);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 1000, heldCents: 0 });
    expect(await events(orderId, 'refund.created')).toHaveLength(1);
  });

  it('when a refund was made 22 hours ago, then Stripe still keeps its key and the job asks for it again', async () => {
    const { intent, refundId } = await stuckTopUpRefund(1200, 300);
    await madeAgo(refundId, 22);

    await sweep();

    expect(refundsOf(intent.id)).toEqual([expect.objectContaining({ amount: 300 })]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
  });

  it('when a notification settles the refund after the job found none at Stripe, then the job does not ask for it again', async () => {
    const { orderId, walletId, intent, refundId } = await stuckTopUpRefund(1100, 200);
    await aged(refundId, 6);
    // An earlier try's refund shows up, and its notification settles ours, between the job's look and its ask.
    let madeId: string | undefined;
    afterNextListing(intent.id, async () => {
      const made = (await t.deps.stripe!.refunds.create({
        payment_intent: intent.id,
        amount: 200,
        metadata: { order_refund_id: refundId },
      })) as unknown as RefundObject;
      madeId = made.id;
      const notified = signedChargeRefundedEvent(intent, [made], { secret: TEST_WEBHOOK_SECRET });
      expect((await deliverStripeEvent(t, notified)).status).toBe(200);
    });
    const [posts] = calls(intent.id);

    await sweep();

    expect(calls(intent.id)[0]).toBe(posts! + 1);
    expect(refundsOf(intent.id)).toEqual([expect.objectContaining({ id: madeId })]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: madeId });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 900, heldCents: 0 });
    expect(await events(orderId, 'refund.created')).toHaveLength(1);
  });

  it('when four minutes have passed since the run claimed its refunds, or the worker is shutting down, then it asks about none of them, and they come up again once the claim runs out', async () => {
    const { intent, refundId } = await stuckTopUpRefund(1000, 100);
    await aged(refundId, 10);
    const before = calls(intent.id);
    const claimedAt = new Date(Date.now() - 4.5 * 60_000);

    expect(await sweep(jest.fn(), t, claimedAt)).toBe(0);

    expect(calls(intent.id)).toEqual(before);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', updatedAt: claimedAt });
    await aged(refundId, 6);
    const stopping = new AbortController();
    stopping.abort();
    expect(await sweep(jest.fn(), t, undefined, stopping.signal)).toBe(0);
    expect(calls(intent.id)).toEqual(before);
    await sweep();
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
  });
});

describe('the settle-stuck-order-refunds job, for refunds Stripe answered pending', () => {
  /** A paid online top-up, refunded in part; Stripe answers the refund pending and never notifies. */
  async function pendingTopUpRefund(paidCents: number, refundCents: number) {
    const topUp = await paidWalletTopUp(t, fake, demo, paidCents, {
      email: `unsettled-${randomUUID()}@example.com`,
      first_name: 'Pat',
    });
    fake.answerNextRefunds('pending');
    const res = await refund(topUp.orderId, { amount_cents: refundCents });
    expect([res.status, res.body.status]).toEqual([201, 'pending']);
    const refundId = res.body.refund_id as string;
    const [made] = refundsOf(topUp.intent.id);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: made!.id });
    return { ...topUp, refundId, made: made! };
  }

  it('when its notification never comes, then Stripe is asked about it a day on, again a day later while pending, and its outcome is settled once, never asked for again', async () => {
    const { orderId, walletId, intent, refundId, made } = await pendingTopUpRefund(2000, 700);
    const before = calls(intent.id);

    // Stripe has answered about it: not asked about before a day.
    await aged(refundId, 6);
    await sweep();
    await aged(refundId, 23 * 60);
    await sweep();
    expect(calls(intent.id)).toEqual(before);

    // A day on: listed, still pending at Stripe, put back another day.
    await aged(refundId, 25 * 60);
    const now = new Date();
    await sweep(jest.fn(), t, now);
    expect(calls(intent.id)).toEqual([before[0], before[1]! + 1]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', updatedAt: now });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 2000, heldCents: 700 });
    await sweep();
    expect(calls(intent.id)).toEqual([before[0], before[1]! + 1]);

    made.status = 'succeeded';
    await aged(refundId, 25 * 60);
    await sweep();

    expect(calls(intent.id)).toEqual([before[0], before[1]! + 2]);
    expect(refundsOf(intent.id)).toHaveLength(1);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 1300, heldCents: 0 });
    expect(await events(orderId, 'refund.created')).toHaveLength(1);
    expect(await events(walletId, 'wallet.funding_returned')).toHaveLength(1);

    await aged(refundId, 25 * 60);
    await sweep();
    expect(calls(intent.id)).toEqual([before[0], before[1]! + 2]);
  });

  it('when Stripe cancels it, then the job fails it a day on and releases its value', async () => {
    const { orderId, walletId, refundId, made } = await pendingTopUpRefund(1000, 400);
    made.status = 'canceled';

    await aged(refundId, 25 * 60);
    await sweep();

    expect(await refundRow(refundId)).toMatchObject({ status: 'failed', providerRefundId: made.id });
    expect(await wallet(walletId)).toMatchObject({ balanceCents: 1000, heldCents: 0 });
    expect(await order(orderId)).toMatchObject({ refundedCents: 0 });
    expect(await events(orderId, 'refund.created')).toHaveLength(0);
  });

  it('when two processes run the job at once, then each such refund is listed once and settled once', async () => {
    const unsettled = [];
    for (let made = 0; made < 4; made += 1) unsettled.push(await pendingTopUpRefund(900, 300));
    for (const { refundId, made } of unsettled) {
      made.status = 'succeeded';
      await aged(refundId, 25 * 60);
    }
    const before = unsettled.map(({ intent }) => calls(intent.id));

    await Promise.all([sweep(jest.fn(), t), sweep(jest.fn(), replica)]);

    for (const [index, { intent, refundId, orderId, walletId }] of unsettled.entries()) {
      expect(calls(intent.id)).toEqual([before[index]![0], before[index]![1]! + 1]);
      expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
      expect(await events(orderId, 'refund.created')).toHaveLength(1);
      expect(await wallet(walletId)).toMatchObject({ balanceCents: 600, heldCents: 0 });
    }
  });
});
