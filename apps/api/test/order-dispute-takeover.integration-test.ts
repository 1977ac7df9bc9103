import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  deliverStripeEvent,
  type FakeRefund,
  type FakeStripe,
  openFundedWallet,
  openShift,
  openTillOrder,
  paidWalletTopUp,
  seedTenant,
  signedChargeRefundedEvent,
  signedDisputeCreatedEvent,
  signedRefundEvent,
  startStripeTestApp,
  stopStripeTestApp,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  tillCardPayment,
} from '@booking/test-kit';

// A payer disputes a payment while an operator's refund of it is still pending at Stripe, on the
// real PostgreSQL and Redis with the fake Stripe. Stripe then fails that refund
// (charge_for_pending_refund_disputed): the chargeback gave its money back. The dispute is
// recorded for what it gave back, and nothing is counted or taken from a wallet twice.

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
afterAll(() => stopStripeTestApp(t, fake));

const staff = () => ({ Authorization: `Bearer ${demo.api_keys.staff}` });
const manager = () => ({ Authorization: `Bearer ${demo.api_keys.manager}` });
const order = (id: string) =>
  t.deps.db.order.findUniqueOrThrow({ where: { id }, include: { refunds: { orderBy: { createdAt: 'asc' } } } });
const wallet = (id: string) => t.deps.db.wallet.findUniqueOrThrow({ where: { id } });
const walletEvents = (walletId: string, name: string) =>
  t.deps.db.event.findMany({ where: { entityId: walletId, name }, orderBy: { createdAt: 'asc' } });

/** An operator's refund Stripe leaves pending: its order_refunds row id and Stripe's refund. */
async function pendingOperatorRefund(orderId: string, body: object) {
  fake.answerNextRefunds('pending');
  const res = await request(t.app).post(`/api/v1/orders/${orderId}/refunds`).set(manager()).send(body);
  expect([res.status, res.body.status]).toEqual([201, 'pending']);
  const made = fake.refunds.find((refund) => refund.metadata.order_refund_id === res.body.refund_id)!;
  return { refundId: res.body.refund_id as string, made };
}

/** Stripe fails the pending refund because its charge was disputed, and notifies it. */
async function failedForDispute(made: FakeRefund) {
  made.status = 'failed';
  const failed = { ...made, failure_reason: 'charge_for_pending_refund_disputed' };
  const reply = await deliverStripeEvent(t, signedRefundEvent(failed, { secret, type: 'refund.failed' }));
  expect(reply.status).toBe(200);
}

async function ledgerAgrees(walletId: string) {
  const [row] = await t.deps.db.$queryRaw<{ balance: number; entries: bigint; lots: bigint }[]>`
    SELECT w.balance_cents AS balance,
           (SELECT COALESCE(SUM(balance_delta), 0) FROM wallet_entries WHERE wallet_id = w.id) AS entries,
           (SELECT COALESCE(SUM(remaining_cents), 0) FROM wallet_lots WHERE wallet_id = w.id) AS lots
    FROM wallets w WHERE w.id = ${walletId}::uuid`;
  expect(Number(row!.entries)).toBe(row!.balance);
  expect(Number(row!.lots)).toBe(row!.balance);
}

describe('a dispute while an operator refund is pending', () => {
  it('when an online top-up is disputed for part of it, then the dispute is recorded in full, the refund it took over stays given back when it fails, the rest is released, and the wallet loses what the payer got back once', async () => {
    const topUp = await paidWalletTopUp(t, fake, demo, 1000, {
      email: `dispute-${randomUUID()}@example.com`,
      first_name: 'Dee',
    });
    const { refundId, made } = await pendingOperatorRefund(topUp.orderId, { amount_cents: 400 });
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 1000, heldCents: 400 });

    // 800 disputed: 600 the refund had not reserved, and 200 of the 400 it had.
    const disputeId = `dp_${randomUUID().replaceAll('-', '')}`;
    const disputed = signedDisputeCreatedEvent(topUp.intent, 800, { secret, disputeId });
    expect((await deliverStripeEvent(t, disputed)).status).toBe(200);
    const meanwhile = await order(topUp.orderId);
    expect(meanwhile.refundedCents).toBe(1000);
    expect(meanwhile.refunds).toEqual([
      expect.objectContaining({ id: refundId, status: 'pending', amountCents: 400 }),
      expect.objectContaining({ source: 'dispute', status: 'succeeded', amountCents: 800, debitedCents: 600 }),
    ]);
    // The refund's 400 stays held for it; the dispute takes the 600 that was not.
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 400, heldCents: 400 });

    await failedForDispute(made);

    const settled = await order(topUp.orderId);
    expect(settled.refundedCents).toBe(800);
    expect(settled.refunds).toEqual([
      expect.objectContaining({ id: refundId, status: 'failed', amountCents: 400 }),
      expect.objectContaining({
        source: 'dispute',
        status: 'succeeded',
        amountCents: 800,
        debitedCents: 800,
        shortfallCents: 0,
      }),
    ]);
    const disputeRow = settled.refunds[1]!.id;
    expect((await walletEvents(topUp.walletId, 'wallet.funding_returned')).map((event) => event.data)).toEqual([
      expect.objectContaining({ refund_id: disputeRow, amount_cents: 600, debited_cents: 600, reason: 'dispute' }),
      expect.objectContaining({ refund_id: disputeRow, amount_cents: 200, debited_cents: 200, reason: 'dispute' }),
    ]);
    expect(await walletEvents(topUp.walletId, 'wallet.refund_review_required')).toHaveLength(0);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 200, heldCents: 0 });
    await ledgerAgrees(topUp.walletId);
    // A refund could still give back what the dispute did not: 200.
    const rest = await request(t.app)
      .post(`/api/v1/orders/${topUp.orderId}/refunds`)
      .set(manager())
      .send({ amount_cents: 201 });
    expect([rest.status, rest.body.error, rest.body.detail?.refundable_cents]).toEqual([
      400,
      'refund_exceeds_paid',
      200,
    ]);
  });

  it("when a till order's card payment loading a wallet is disputed in full, then the tender and the order count it once, and the load's value leaves the wallet once", async () => {
    const target = await openFundedWallet(t, demo, 0);
    const { order_id: orderId } = await openTillOrder(t, demo, shiftId, [
      { type: 'wallet_load', wallet_id: target.walletId, amount_cents: 1000 },
    ]);
    const intent = await tillCardPayment(t, fake, demo, orderId, 1000);
    const tendered = await request(t.app)
      .post(`/api/pos/orders/${orderId}/tenders`)
      .set(staff())
      .send({ type: 'card', amount_cents: 1000, payment_reference: intent.id });
    expect(tendered.status).toBe(201);
    expect((await request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(staff()).send({})).status).toBe(200);
    const { id: tenderId } = await t.deps.db.orderTender.findFirstOrThrow({ where: { orderId } });
    const { refundId, made } = await pendingOperatorRefund(orderId, { amount_cents: 400, tender_id: tenderId });
    expect(await wallet(target.walletId)).toMatchObject({ balanceCents: 1000, heldCents: 400 });

    const disputed = signedDisputeCreatedEvent(intent, 1000, { secret });
    expect((await deliverStripeEvent(t, disputed)).status).toBe(200);
    expect(await wallet(target.walletId)).toMatchObject({ balanceCents: 400, heldCents: 400 });
    await failedForDispute(made);

    const settled = await order(orderId);
    expect(settled.refundedCents).toBe(1000);
    expect(settled.refunds).toEqual([
      expect.objectContaining({ id: refundId, status: 'failed', amountCents: 400 }),
      expect.objectContaining({ source: 'dispute', status: 'succeeded', amountCents: 1000, debitedCents: 1000 }),
    ]);
    const tender = await t.deps.db.orderTender.findUniqueOrThrow({ where: { id: tenderId } });
    expect(tender.refundedCents).toBe(1000);
    const line = await t.deps.db.orderLine.findFirstOrThrow({ where: { orderId, type: 'wallet_load' } });
    expect(line.returnedCents).toBe(1000);
    expect(await wallet(target.walletId)).toMatchObject({ balanceCents: 0, heldCents: 0 });
    expect((await walletEvents(target.walletId, 'wallet.funding_returned')).map((event) => event.data)).toEqual([
      expect.objectContaining({ amount_cents: 600, reason: 'dispute' }),
      expect.objectContaining({ amount_cents: 400, reason: 'dispute' }),
    ]);
    await ledgerAgrees(target.walletId);
  });

  it("when a refund naming a till order's wallet load is pending and the whole payment is disputed, then the dispute takes nothing more from the load, and the refund's failure hands the load over once", async () => {
    const target = await openFundedWallet(t, demo, 0);
    const { order_id: orderId } = await openTillOrder(t, demo, shiftId, [
      { type: 'wallet_load', wallet_id: target.walletId, amount_cents: 1000 },
      { type: 'product', sku: 'SKU-1', description: 'souvenir', quantity: 1, unit_price_cents: 500 },
    ]);
    const intent = await tillCardPayment(t, fake, demo, orderId, 1500);
    const tendered = await request(t.app)
      .post(`/api/pos/orders/${orderId}/tenders`)
      .set(staff())
      .send({ type: 'card', amount_cents: 1500, payment_reference: intent.id });
    expect(tendered.status).toBe(201);
    expect((await request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(staff()).send({})).status).toBe(200);
    const line = () => t.deps.db.orderLine.findFirstOrThrow({ where: { orderId, type: 'wallet_load' } });
    const { made } = await pendingOperatorRefund(orderId, { amount_cents: 1000, line_id: (await line()).id });
    expect(await wallet(target.walletId)).toMatchObject({ balanceCents: 1000, heldCents: 1000 });

    // 1500 disputed: the 1000 the refund holds, and the souvenir's 500, which funded no wallet.
    expect((await deliverStripeEvent(t, signedDisputeCreatedEvent(intent, 1500, { secret }))).status).toBe(200);
    expect(await wallet(target.walletId)).toMatchObject({ balanceCents: 1000, heldCents: 1000 });
    expect(await walletEvents(target.walletId, 'wallet.refund_review_required')).toHaveLength(0);
    await failedForDispute(made);

    expect(await line()).toMatchObject({ totalCents: 1000, returnedCents: 1000 });
    const settled = await order(orderId);
    expect(settled.refundedCents).toBe(1500);
    expect(settled.refunds[1]).toMatchObject({ source: 'dispute', amountCents: 1500, debitedCents: 1000 });
    expect(await wallet(target.walletId)).toMatchObject({ balanceCents: 0, heldCents: 0 });
    expect((await walletEvents(target.walletId, 'wallet.funding_returned')).map((event) => event.data)).toEqual([
      expect.objectContaining({ amount_cents: 1000, debited_cents: 1000, reason: 'dispute' }),
    ]);
    expect(await walletEvents(target.walletId, 'wallet.refund_review_required')).toHaveLength(0);
    await ledgerAgrees(target.walletId);
  });

  it('when an online top-up is refunded in full in the dashboard while an operator refund of it is pending, then that refund failing hands its held value to the dashboard refund instead of back to the customer', async () => {
    const topUp = await paidWalletTopUp(t, fake, demo, 1000, {
      email: `dashboard-${randomUUID()}@example.com`,
      first_name: 'Dash',
    });
    const { refundId, made } = await pendingOperatorRefund(topUp.orderId, { amount_cents: 400 });
    const dashboard = {
      ...made,
      id: `re_${randomUUID().replaceAll('-', '')}`,
      amount: 1000,
      status: 'succeeded' as const,
      metadata: {},
    };
    const refunded = signedChargeRefundedEvent(fake.intents.get(topUp.intent.id)!, [dashboard], { secret });
    expect((await deliverStripeEvent(t, refunded)).status).toBe(200);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 400, heldCents: 400 });
    await failedForDispute(made);

    const settled = await order(topUp.orderId);
    expect(settled.refundedCents).toBe(1000);
    expect(settled.refunds).toEqual([
      expect.objectContaining({ id: refundId, status: 'failed' }),
      expect.objectContaining({ source: 'provider', status: 'succeeded', amountCents: 1000, debitedCents: 1000 }),
    ]);
    expect(await wallet(topUp.walletId)).toMatchObject({ balanceCents: 0, heldCents: 0 });
    expect((await walletEvents(topUp.walletId, 'wallet.funding_returned')).map((event) => event.data)).toEqual([
      expect.objectContaining({ refund_id: settled.refunds[1]!.id, amount_cents: 600, reason: 'refund' }),
      expect.objectContaining({ refund_id: settled.refunds[1]!.id, amount_cents: 400, reason: 'refund' }),
    ]);
    await ledgerAgrees(topUp.walletId);
  });
});
