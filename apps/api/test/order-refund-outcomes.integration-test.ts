import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type Stripe from 'stripe';
import type { DemoTenant } from '@booking/db';
import type { Logger } from '@booking/logging';
import {
  deliverStripeEvent,
  type FakeRefund,
  type FakeStripe,
  openShift,
  openTillOrder,
  seedTenant,
  signedChargeRefundedEvent,
  signedDisputeCreatedEvent,
  signedPaymentSucceededEvent,
  signedRefundEvent,
  startStripeTestApp,
  stopStripeTestApp,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  tillCardPayment,
  walletTopUp,
} from '@booking/test-kit';
import { cancelUnpaidOrders } from '../src/online-orders/cancel-unpaid-orders';
import { reconcileOrderRefunds } from '../src/orders/reconcile-order-refunds';
import { refundVoidedCardTenders } from '../src/pos-orders/refund-voided-card-tenders';

// Order refunds as Stripe really answers them, on the real PostgreSQL and Redis with the fake
// Stripe: the refund of a payment an order could not keep that Stripe leaves pending and later
// settles or fails, and a voided order's pending card refund while other money comes back on
// the same payment.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let shiftId: string;
const secret = TEST_WEBHOOK_SECRET;

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  demo = await seedTenant(t.deps);
  shiftId = await openShift(t, demo);
});
afterEach(() => fake.failNextRefunds(0));
afterAll(() => stopStripeTestApp(t, fake));

const order = (id: string) =>
  t.deps.db.order.findUniqueOrThrow({ where: { id }, include: { refunds: { orderBy: { createdAt: 'asc' } } } });
const refundEvents = (orderId: string) =>
  t.deps.db.event.findMany({ where: { entityId: orderId, name: 'refund.created' }, orderBy: { createdAt: 'asc' } });
const refundsOf = (intentId: string) => fake.refunds.filter((refund) => refund.payment_intent === intentId);
const refundCalls = (intentId: string) =>
  fake.requestsTo('POST', '/v1/refunds').filter((call) => call.body.payment_intent === intentId).length;
/** What the abandoned-orders job does for the order's void refunds left pending. */
const retryVoidRefunds = (orderId: string) =>
  refundVoidedCardTenders({ db: t.deps.db, stripe: t.deps.stripe! }, orderId);
/** A refund as Stripe reports it later, with the status it has come to. */
const as = (refund: FakeRefund, status: FakeRefund['status']) => ({ ...refund, status });
/** Stripe's refund notifications and the refunds they carry, read by the webhook's reconciliation with a logger to read. */
async function reconcileWithLogger(orderId: string, type: string, refunds: object[]) {
  const warn = jest.fn();
  const event = { id: `evt_${randomUUID()}`, type };
  await reconcileOrderRefunds(t.deps.db, event, orderId, { refunds: refunds as Stripe.Refund[] }, { warn });
  return warn;
}
/** A refund made in Stripe's dashboard, and its notification. */
async function dashboardRefund(intent: { id: string }, cents: number) {
  const made = (await t.deps.stripe!.refunds.create({ payment_intent: intent.id, amount: cents })) as FakeRefund;
  expect(made.status).toBe('succeeded');
  const intentNow = fake.intents.get(intent.id)!;
  const reply = await deliverStripeEvent(t, signedChargeRefundedEvent(intentNow, [made], { secret }));
  expect(reply.status).toBe(200);
  return made;
}

/** An online top-up cancelled unpaid, then paid anyway: its payment comes late, its refund answered with `answer` (null: none is made). */
async function latePayment(cents: number, answer: FakeRefund['status'] | null) {
  const placed = await walletTopUp(t, demo, cents, { email: `late-${randomUUID()}@example.com`, first_name: 'L' });
  await t.deps.db.order.update({ where: { id: placed.order_id }, data: { payBy: new Date(Date.now() - 1000) } });
  await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
  const intent = fake.succeed(placed.payment_intent_id);
  const paid = signedPaymentSucceededEvent(intent, { secret });
  if (answer) fake.answerNextRefunds(answer);
  return { orderId: placed.order_id, walletId: placed.wallet_id, intent, paid };
}

describe('the refund of a late payment, as Stripe answers it', () => {
  it('when Stripe answers pending and later notifies it succeeded, then it is recorded once, pending, and refund.created comes once with the success', async () => {
    const { orderId, walletId, intent, paid } = await latePayment(1500, 'pending');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);

    const [made] = refundsOf(intent.id);
    const pending = await order(orderId);
    expect(pending).toMatchObject({ status: 'cancelled', reviewReason: 'paid_after_cancelled', refundedCents: 1500 });
    expect(pending.refunds).toEqual([
      expect.objectContaining({
        source: 'late_payment',
        status: 'pending',
        amountCents: 1500,
        providerRefundId: made!.id,
      }),
    ]);
    expect(await refundEvents(orderId)).toHaveLength(0);

    // Redelivered, the payment is not refunded again.
    const calls = refundCalls(intent.id);
    const again = await Promise.all([
      deliverStripeEvent(t, paid),
      deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret })),
    ]);
    expect(again.map((r) => r.status)).toEqual([200, 200]);
    expect(refundCalls(intent.id)).toBe(calls);

    // Stripe settles it, and says so several times and in several ways.
    made!.status = 'succeeded';
    const updated = signedRefundEvent(made!, { secret });
    const notified = await Promise.all([
      deliverStripeEvent(t, updated),
      deliverStripeEvent(t, updated),
      deliverStripeEvent(t, signedRefundEvent(made!, { secret })),
      deliverStripeEvent(t, signedChargeRefundedEvent(intent, [made!], { secret })),
    ]);
    expect(notified.map((r) => r.status)).toEqual([200, 200, 200, 200]);

    const settled = await order(orderId);
    expect(settled).toMatchObject({ refundedCents: 1500, reviewReason: 'paid_after_cancelled' });
    expect(settled.refunds).toEqual([
      expect.objectContaining({ source: 'late_payment', status: 'succeeded', amountCents: 1500 }),
    ]);
    const created = await refundEvents(orderId);
    expect(created.map((event) => event.data)).toEqual([
      expect.objectContaining({
        refund_id: settled.refunds[0]!.id,
        payment_intent_id: intent.id,
        amount_cents: 1500,
        status: 'succeeded',
      }),
    ]);
    expect(refundsOf(intent.id)).toHaveLength(1);
    // The payment funded nothing, so nothing is taken back from the wallet.
    expect(await t.deps.db.event.count({ where: { entityId: walletId } })).toBe(0);
  });

  it('when Stripe answers pending and the refund then fails, then no refund.created, the amount is no longer refunded, the order is flagged and a warning logged, and nothing asks again', async () => {
    const { orderId, intent, paid } = await latePayment(1700, 'pending');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    const [made] = refundsOf(intent.id);
    made!.status = 'failed';

    // The webhook's reconciliation, with a logger to read.
    const warn = jest.fn();
    const failed = made as unknown as Stripe.Refund;
    await reconcileOrderRefunds(
      t.deps.db,
      { id: `evt_${randomUUID()}`, type: 'refund.failed' },
      orderId,
      {
        refunds: [failed],
      },
      { warn },
    );
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatchObject({ order_id: orderId, provider_refund_id: made!.id });

    // Stripe's own notifications of it, and the payment's again, change nothing more.
    const calls = refundCalls(intent.id);
    const replies = await Promise.all([
      deliverStripeEvent(t, signedRefundEvent(made!, { secret, type: 'refund.failed' })),
      deliverStripeEvent(t, signedChargeRefundedEvent(intent, [made!], { secret })),
      deliverStripeEvent(t, paid),
      deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret })),
    ]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(refundCalls(intent.id)).toBe(calls);

    const flagged = await order(orderId);
    expect(flagged).toMatchObject({ refundedCents: 0, reviewReason: 'late_payment_refund_failed' });
    expect(flagged.refunds).toEqual([
      expect.objectContaining({
        source: 'late_payment',
        status: 'failed',
        amountCents: 1700,
        reason: 'paid_after_cancelled',
      }),
    ]);
    expect(await refundEvents(orderId)).toHaveLength(0);
    const view = await request(t.app)
      .get(`/api/v1/orders/${orderId}`)
      .set({ Authorization: `Bearer ${demo.api_keys.manager}` });
    expect(view.body).toMatchObject({ review_reason: 'late_payment_refund_failed', refunded_cents: 0 });
  });

  it('when the failure is notified before the refund call has answered pending, then it is booked once, failed', async () => {
    const { orderId, intent, paid } = await latePayment(1300, 'pending');
    // Stripe makes the refund at once but its answer comes late.
    fake.delayNextRefunds(1, 1500);
    // Sent now (supertest sends on then()), answered once the refund's answer comes.
    const paying = deliverStripeEvent(t, paid).then((reply) => reply);
    for (let wait = 0; refundsOf(intent.id).length === 0 && wait < 100; wait += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [made] = refundsOf(intent.id);
    const failed = signedRefundEvent(as(made!, 'failed'), { secret, type: 'refund.failed' });
    expect((await deliverStripeEvent(t, failed)).status).toBe(200);
    expect((await paying).status).toBe(200);

    const booked = await order(orderId);
    expect(booked).toMatchObject({ refundedCents: 0, reviewReason: 'late_payment_refund_failed' });
    expect(booked.refunds).toEqual([
      expect.objectContaining({ source: 'late_payment', status: 'failed', providerRefundId: made!.id }),
    ]);
    expect(await refundEvents(orderId)).toHaveLength(0);
  });
});

describe('a late payment whose refund fails, and the money that repays its payer', () => {
  it('when the payment is disputed while its refund is pending and Stripe then fails the refund for it, then the dispute is recorded, the payment counts as given back once, and the order is flagged all the same (the merchant may still win the dispute)', async () => {
    const { orderId, walletId, intent, paid } = await latePayment(1500, 'pending');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    const [made] = refundsOf(intent.id);
    const disputeId = `dp_${randomUUID().replaceAll('-', '')}`;

    const disputed = signedDisputeCreatedEvent(intent, 1500, { secret, disputeId });
    expect((await deliverStripeEvent(t, disputed)).status).toBe(200);
    const meanwhile = await order(orderId);
    expect(meanwhile.refundedCents).toBe(1500);
    expect(meanwhile.refunds).toEqual([
      expect.objectContaining({ source: 'late_payment', status: 'pending', amountCents: 1500 }),
      expect.objectContaining({
        source: 'dispute',
        status: 'succeeded',
        amountCents: 1500,
        providerRefundId: disputeId,
      }),
    ]);

    // Stripe fails a refund still pending when its charge is disputed: the chargeback repays.
    const failed = { ...as(made!, 'failed'), failure_reason: 'charge_for_pending_refund_disputed' };
    const warn = await reconcileWithLogger(orderId, 'refund.failed', [failed]);
    const again = await Promise.all([
      deliverStripeEvent(t, signedRefundEvent(failed, { secret, type: 'refund.failed' })),
      deliverStripeEvent(t, disputed),
      deliverStripeEvent(t, paid),
    ]);
    expect(again.map((r) => r.status)).toEqual([200, 200, 200]);

    expect(warn).toHaveBeenCalledTimes(1);
    const settled = await order(orderId);
    expect(settled).toMatchObject({ refundedCents: 1500, reviewReason: 'late_payment_refund_failed' });
    expect(settled.refunds.map((r) => [r.source, r.status, r.amountCents])).toEqual([
      ['late_payment', 'failed', 1500],
      ['dispute', 'succeeded', 1500],
    ]);
    // A dispute is no refund of ours, and the payment funded nothing: no event, no wallet touched.
    expect(await refundEvents(orderId)).toHaveLength(0);
    expect(await t.deps.db.event.count({ where: { entityId: walletId } })).toBe(0);
    expect(refundsOf(intent.id)).toHaveLength(1);
  });

  it('when the failure of the pending refund is notified before the dispute, then the order ends the same: flagged, and the dispute recorded and counted once without clearing the flag', async () => {
    const { orderId, intent, paid } = await latePayment(1300, 'pending');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    const [made] = refundsOf(intent.id);
    const failed = { ...as(made!, 'failed'), failure_reason: 'charge_for_pending_refund_disputed' };

    expect((await deliverStripeEvent(t, signedRefundEvent(failed, { secret, type: 'refund.failed' }))).status).toBe(
      200,
    );
    expect(await order(orderId)).toMatchObject({ refundedCents: 0, reviewReason: 'late_payment_refund_failed' });
    expect((await deliverStripeEvent(t, signedDisputeCreatedEvent(intent, 1300, { secret }))).status).toBe(200);

    const settled = await order(orderId);
    expect(settled).toMatchObject({ refundedCents: 1300, reviewReason: 'late_payment_refund_failed' });
    expect(settled.refunds.map((r) => [r.source, r.status, r.amountCents])).toEqual([
      ['late_payment', 'failed', 1300],
      ['dispute', 'succeeded', 1300],
    ]);
  });

  it('when the refund succeeded and Stripe later reports it failed, then it is failed, the amount is no longer refunded, the order is flagged and a warning logged, once', async () => {
    const { orderId, intent, paid } = await latePayment(1200, 'succeeded');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    expect(await order(orderId)).toMatchObject({ refundedCents: 1200, reviewReason: 'paid_after_cancelled' });
    const [made] = refundsOf(intent.id);
    made!.status = 'failed';

    const warn = await reconcileWithLogger(orderId, 'refund.updated', [made!]);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatchObject({
      order_id: orderId,
      provider_refund_id: made!.id,
      amount_cents: 1200,
      previous_status: 'succeeded',
    });
    // Said again, in each of Stripe's ways, and the payment notified again: nothing more moves.
    const calls = refundCalls(intent.id);
    const replies = await Promise.all([
      deliverStripeEvent(t, signedRefundEvent(made!, { secret, type: 'refund.failed' })),
      deliverStripeEvent(t, signedChargeRefundedEvent(intent, [made!], { secret })),
      deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret })),
    ]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await reconcileWithLogger(orderId, 'refund.failed', [made!])).not.toHaveBeenCalled();
    expect(refundCalls(intent.id)).toBe(calls);

    const reversed = await order(orderId);
    expect(reversed).toMatchObject({ refundedCents: 0, reviewReason: 'late_payment_refund_failed' });
    expect(reversed.refunds).toEqual([
      expect.objectContaining({ source: 'late_payment', status: 'failed', amountCents: 1200 }),
    ]);
    // refund.created went out with the success and is not taken back.
    expect(await refundEvents(orderId)).toHaveLength(1);
  });

  it('when the refund succeeded, the payment is then disputed, and Stripe later reports the refund failed, then the dispute stays recorded as the money given back and the order is flagged', async () => {
    const { orderId, intent, paid } = await latePayment(1000, 'succeeded');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    const disputeId = `dp_${randomUUID().replaceAll('-', '')}`;
    expect((await deliverStripeEvent(t, signedDisputeCreatedEvent(intent, 1000, { secret, disputeId }))).status).toBe(
      200,
    );
    const [made] = refundsOf(intent.id);

    const warn = await reconcileWithLogger(orderId, 'refund.updated', [as(made!, 'failed')]);

    expect(warn).toHaveBeenCalledTimes(1);
    const reversed = await order(orderId);
    expect(reversed).toMatchObject({ refundedCents: 1000, reviewReason: 'late_payment_refund_failed' });
    expect(reversed.refunds.map((r) => [r.source, r.status, r.amountCents, r.providerRefundId])).toEqual([
      ['late_payment', 'failed', 1000, made!.id],
      ['dispute', 'succeeded', 1000, disputeId],
    ]);
  });

  it('when the payment is disputed before its refund could be asked for, then none is asked for and the order is flagged; a refund of it Stripe reports after all counts nothing twice', async () => {
    const { orderId, intent, paid } = await latePayment(800, null);
    fake.failNextRefunds(5);
    expect((await deliverStripeEvent(t, paid)).status).toBe(500);
    fake.failNextRefunds(0);
    expect((await deliverStripeEvent(t, signedDisputeCreatedEvent(intent, 800, { secret }))).status).toBe(200);
    expect(await order(orderId)).toMatchObject({ refundedCents: 800, reviewReason: 'paid_after_cancelled' });

    const calls = refundCalls(intent.id);
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    expect(refundCalls(intent.id)).toBe(calls);
    expect(await order(orderId)).toMatchObject({ refundedCents: 800, reviewReason: 'late_payment_refund_failed' });

    // One of the failed calls had reached Stripe after all, and its notification comes now.
    const late = {
      id: `re_${randomUUID().replaceAll('-', '')}`,
      object: 'refund',
      amount: 800,
      currency: intent.currency,
      payment_intent: intent.id,
      status: 'pending',
      metadata: { order_id: orderId, automatic: 'true' },
    };
    await reconcileWithLogger(orderId, 'refund.created', [late]);
    expect(await order(orderId)).toMatchObject({ refundedCents: 800 });
    await reconcileWithLogger(orderId, 'refund.failed', [{ ...late, status: 'failed' }]);
    const settled = await order(orderId);
    expect(settled).toMatchObject({ refundedCents: 800, reviewReason: 'late_payment_refund_failed' });
    expect(settled.refunds.map((r) => [r.source, r.status, r.amountCents])).toEqual([
      ['dispute', 'succeeded', 800],
      ['late_payment', 'failed', 800],
    ]);
  });

  it("when a flagged order's payment is given back in Stripe's dashboard, then it stays flagged while part is owed and the flag gives way to why the payment was not kept once all is back", async () => {
    const { orderId, intent, paid } = await latePayment(1100, 'failed');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    expect(await order(orderId)).toMatchObject({ refundedCents: 0, reviewReason: 'late_payment_refund_failed' });

    await dashboardRefund(intent, 400);
    expect(await order(orderId)).toMatchObject({ refundedCents: 400, reviewReason: 'late_payment_refund_failed' });
    await dashboardRefund(intent, 700);

    const repaid = await order(orderId);
    expect(repaid).toMatchObject({ refundedCents: 1100, reviewReason: 'paid_after_cancelled' });
    expect(repaid.refunds.map((r) => [r.source, r.status, r.amountCents])).toEqual([
      ['late_payment', 'failed', 1100],
      ['provider', 'succeeded', 400],
      ['provider', 'succeeded', 700],
    ]);
    // The payment notified again does not ask for its refund again.
    const calls = refundCalls(intent.id);
    expect((await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret }))).status).toBe(200);
    expect(refundCalls(intent.id)).toBe(calls);
  });

  it('when the refund stays pending and no notification comes, then the unpaid-orders job asks Stripe about it once a day, and books its answer', async () => {
    const { orderId, intent, paid } = await latePayment(900, 'pending');
    expect((await deliverStripeEvent(t, paid)).status).toBe(200);
    const [made] = refundsOf(intent.id);
    const asked = () =>
      fake.requestsTo('GET', '/v1/refunds').filter((call) => call.body.payment_intent === intent.id).length;
    const job = () => cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    /** As if its refund was booked, or last asked about, `hours` ago. */
    const touched = (hours: number) =>
      t.deps.db.orderRefund.updateMany({
        where: { orderId },
        data: { updatedAt: new Date(Date.now() - hours * 60 * 60 * 1000) },
      });

    await touched(23);
    await job();
    expect(asked()).toBe(0);
    // Still pending at Stripe: asked once, and not again before another day.
    await touched(25);
    await job();
    await job();
    expect(asked()).toBe(1);
    expect((await order(orderId)).refunds[0]).toMatchObject({ status: 'pending' });

    // Two pods' runs at once: the answer is booked once.
    made!.status = 'succeeded';
    await touched(25);
    await Promise.all([job(), job()]);
    expect(asked()).toBeGreaterThanOrEqual(2);
    const settled = await order(orderId);
    expect(settled).toMatchObject({ refundedCents: 900, reviewReason: 'paid_after_cancelled' });
    expect(settled.refunds[0]).toMatchObject({ source: 'late_payment', status: 'succeeded', amountCents: 900 });
    expect((await refundEvents(orderId)).map((event) => event.data)).toEqual([
      expect.objectContaining({ refund_id: settled.refunds[0]!.id, amount_cents: 900 }),
    ]);
  });

  it("when one stale refund cannot be booked, then the unpaid-orders job still cancels its orders and books the others' answers, logs it, and puts it back a day", async () => {
    const broken = await latePayment(700, 'pending');
    expect((await deliverStripeEvent(t, broken.paid)).status).toBe(200);
    const fine = await latePayment(600, 'pending');
    expect((await deliverStripeEvent(t, fine.paid)).status).toBe(200);
    const unpaid = await walletTopUp(t, demo, 500, { email: `unpaid-${randomUUID()}@example.com`, first_name: 'U' });
    await t.deps.db.order.update({ where: { id: unpaid.order_id }, data: { payBy: new Date(Date.now() - 1000) } });
    const dayAgo = new Date(Date.now() - 25 * 60 * 60 * 1000);
    await t.deps.db.orderRefund.updateMany({
      where: { orderId: { in: [broken.orderId, fine.orderId] } },
      data: { updatedAt: dayAgo },
    });
    // Its failure cannot be booked: the order no longer counts what the refund would release.
    await t.deps.db.order.update({ where: { id: broken.orderId }, data: { refundedCents: 0 } });
    refundsOf(broken.intent.id)[0]!.status = 'failed';
    refundsOf(fine.intent.id)[0]!.status = 'succeeded';
    const warn = jest.fn();

    const now = new Date();
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe, logger: { warn } as unknown as Logger }, now);

    expect(await order(unpaid.order_id)).toMatchObject({ status: 'cancelled' });
    expect((await order(fine.orderId)).refunds[0]).toMatchObject({ status: 'succeeded' });
    expect((await order(broken.orderId)).refunds[0]).toMatchObject({ status: 'pending', updatedAt: now });
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ order_id: broken.orderId, refund_id: (await order(broken.orderId)).refunds[0]!.id }),
      'late payment refund: not booked',
    );
  });
});

describe("a voided order's pending card refund", () => {
  /** A till order paid by card and voided while Stripe refuses its refund: the void's refund stays pending. */
  async function voidedWithPendingRefund(cents: number) {
    const { order_id: orderId } = await openTillOrder(t, demo, shiftId, [
      { type: 'product', description: 'map', quantity: 1, unit_price_cents: cents },
    ]);
    const intent = await tillCardPayment(t, fake, demo, orderId, cents);
    const staff = { Authorization: `Bearer ${demo.api_keys.staff}` };
    const tendered = await request(t.app)
      .post(`/api/pos/orders/${orderId}/tenders`)
      .set(staff)
      .send({ type: 'card', amount_cents: cents, payment_reference: intent.id });
    expect(tendered.status).toBe(201);
    // The first try and both of the SDK's retries.
    fake.failNextRefunds(3);
    expect((await request(t.app).post(`/api/pos/orders/${orderId}/void`).set(staff)).body.status).toBe('voided');
    const [voidRefund] = (await order(orderId)).refunds;
    expect(voidRefund).toMatchObject({ source: 'void', status: 'pending', amountCents: cents });
    return { orderId, intent, voidRefundId: voidRefund!.id };
  }

  it('when a part is refunded in the dashboard, then that is recorded with its own amount, the void stays pending for the rest, and its own refund settles it', async () => {
    const { orderId, intent, voidRefundId } = await voidedWithPendingRefund(1000);
    const dashboard = await dashboardRefund(intent, 300);

    const after = await order(orderId);
    expect(after.refunds).toEqual([
      expect.objectContaining({ id: voidRefundId, source: 'void', status: 'pending', amountCents: 700 }),
      expect.objectContaining({
        source: 'provider',
        status: 'succeeded',
        amountCents: 300,
        providerRefundId: dashboard.id,
      }),
    ]);
    const tender = () => t.deps.db.orderTender.findFirstOrThrow({ where: { orderId } });
    expect((await tender()).refundedCents).toBe(300);
    expect((await refundEvents(orderId)).map((event) => event.data)).toEqual([
      expect.objectContaining({ refund_id: after.refunds[1]!.id, amount_cents: 300 }),
    ]);

    // The job asks again; Stripe refunds what it still holds, pending at first, and notifies it.
    fake.answerNextRefunds('pending');
    await retryVoidRefunds(orderId);
    const own = refundsOf(intent.id).find((refund) => refund.metadata.order_refund_id === voidRefundId)!;
    expect(own).toMatchObject({ amount: 700, status: 'pending' });
    expect((await order(orderId)).refunds[0]).toMatchObject({ status: 'pending', amountCents: 700 });
    own.status = 'succeeded';
    expect((await deliverStripeEvent(t, signedRefundEvent(own, { secret }))).status).toBe(200);

    const settled = await order(orderId);
    expect(settled.refunds[0]).toMatchObject({ status: 'succeeded', amountCents: 700, providerRefundId: own.id });
    expect((await tender()).refundedCents).toBe(1000);
    expect((await refundEvents(orderId)).map((event) => event.data)).toEqual([
      expect.objectContaining({ refund_id: after.refunds[1]!.id, amount_cents: 300 }),
      expect.objectContaining({ refund_id: voidRefundId, amount_cents: 700 }),
    ]);
  });

  it("when a part is refunded in the dashboard and the void's own refund then succeeds at once, then the tender counts both parts", async () => {
    const { orderId, intent, voidRefundId } = await voidedWithPendingRefund(1000);
    await dashboardRefund(intent, 300);

    await retryVoidRefunds(orderId);

    const own = refundsOf(intent.id).find((refund) => refund.metadata.order_refund_id === voidRefundId)!;
    expect(own).toMatchObject({ amount: 700, status: 'succeeded' });
    expect((await order(orderId)).refunds[0]).toMatchObject({ status: 'succeeded', amountCents: 700 });
    expect((await t.deps.db.orderTender.findFirstOrThrow({ where: { orderId } })).refundedCents).toBe(1000);
    expect((await refundEvents(orderId)).map((event) => event.data)).toEqual([
      expect.objectContaining({ amount_cents: 300 }),
      expect.objectContaining({ refund_id: voidRefundId, amount_cents: 700 }),
    ]);
  });

  it('when all of it is refunded in the dashboard, then the void has nothing left: it ends failed and is not asked for again', async () => {
    const { orderId, intent, voidRefundId } = await voidedWithPendingRefund(500);
    await dashboardRefund(intent, 500);

    const after = await order(orderId);
    expect(after.refunds).toEqual([
      expect.objectContaining({ id: voidRefundId, source: 'void', status: 'failed' }),
      expect.objectContaining({ source: 'provider', status: 'succeeded', amountCents: 500 }),
    ]);
    expect((await refundEvents(orderId)).map((event) => event.data)).toEqual([
      expect.objectContaining({ refund_id: after.refunds[1]!.id, amount_cents: 500 }),
    ]);
    const calls = refundCalls(intent.id);
    await retryVoidRefunds(orderId);
    expect(refundCalls(intent.id)).toBe(calls);
  });
});
