import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { signToken } from '@booking/signing';
import {
  clientIp,
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  seedTenant,
  signedDisputeCreatedEvent,
  signedPaymentSucceededEvent,
  startStripeTestApp,
  stopStripeTestApp,
  TEST_WEBHOOK_SECRET,
  type TestApp,
} from '@booking/test-kit';
import { ANY_TENANT, lockWallet } from '../src/locks';
import { cancelUnpaidOrders } from '../src/online-orders/cancel-unpaid-orders';
import { debitWallet, holdWalletValue } from '../src/wallets/wallet-ledger';

// Online wallet top-ups when something goes wrong, on the real PostgreSQL and Redis with the
// fake Stripe: no provider or a refusing one, the buyer's token, payments an order cannot keep
// (a refund the provider first refuses too), and a dispute of value already partly spent,
// notified many times at once.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  ({ fake, t } = await startStripeTestApp());
  demo = await seedTenant(t.deps);
});
afterAll(() => stopStripeTestApp(t, fake));

const buyer = () => ({ email: `failures-${randomUUID()}@example.com`, first_name: 'Grace' });
const body = (amountCents: number) => ({
  tenant: demo.tenant.slug,
  amount_cents: amountCents,
  currency: 'USD',
  customer: buyer(),
});
const post = (app: TestApp, payload: object) =>
  request(app.app).post('/api/orders/wallet-topups').set('X-Forwarded-For', clientIp()).send(payload);
const events = (entityId: string, name: string) => t.deps.db.event.findMany({ where: { entityId, name } });
const order = (id: string) => t.deps.db.order.findUniqueOrThrow({ where: { id }, include: { refunds: true } });

async function topUp(amountCents: number) {
  const res = await post(t, body(amountCents));
  expect(res.status).toBe(201);
  return res.body as { order_id: string; wallet_id: string; payment_intent_id: string; order_token: string };
}

/** Spends `cents` of the wallet as a settled till order would: held, then captured. */
async function spend(walletId: string, cents: number) {
  await t.deps.db.$transaction(async (tx) => {
    const wallet = (await lockWallet(tx, ANY_TENANT, walletId))!;
    await holdWalletValue(tx, wallet, cents, { reason: 'test spend' });
    await debitWallet(tx, wallet, { kind: 'capture', amountCents: cents, fromHold: true, reason: 'test spend' });
  });
}

describe('a top-up the provider cannot take', () => {
  it('when Stripe is not configured, then 503 payments_not_configured and nothing is written', async () => {
    const offline = createTestApp({ STRIPE_SECRET_KEY: '' });
    try {
      const payload = body(2000);
      const before = await t.deps.db.order.count();
      const res = await post(offline, payload);
      expect([res.status, res.body.error]).toEqual([503, 'payments_not_configured']);
      expect(await t.deps.db.customer.count({ where: { email: payload.customer.email } })).toBe(0);
      expect(await t.deps.db.order.count()).toBe(before);
    } finally {
      await offline.close();
    }
  });

  it('when Stripe refuses the PaymentIntent, then 502 payment_provider_error, the order has no PaymentIntent and no event, and the job cancels it silently', async () => {
    const payload = body(100_000_000);
    const res = await post(t, payload);
    expect([res.status, res.body.error]).toEqual([502, 'payment_provider_error']);
    expect(res.body.detail).toMatchObject({ provider_code: 'amount_too_large' });

    const customer = await t.deps.db.customer.findFirstOrThrow({ where: { email: payload.customer.email } });
    const left = await t.deps.db.order.findFirstOrThrow({ where: { customerId: customer.id } });
    expect(left).toMatchObject({ status: 'pending_payment', paymentIntentId: null });
    expect(await events(left.id, 'order.created')).toHaveLength(0);

    await t.deps.db.order.update({ where: { id: left.id }, data: { payBy: new Date(Date.now() - 1000) } });
    const cancelCalls = fake.requestsTo('POST', /\/cancel$/).length;
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    expect((await order(left.id)).status).toBe('cancelled');
    expect(await events(left.id, 'order.cancelled')).toHaveLength(0);
    // No PaymentIntent, nothing to cancel at the provider.
    expect(fake.requestsTo('POST', /\/cancel$/)).toHaveLength(cancelCalls);
  });
});

describe("the buyer's order token", () => {
  it('when the token is missing, expired, of another purpose or for an unknown order, then 401 or 404 with the documented code', async () => {
    const placed = await topUp(1000);
    const secret = t.deps.config.tokenSigningSecret;
    const view = (id: string, token?: string) => {
      const req = request(t.app).get(`/api/orders/${id}`);
      return token === undefined ? req : req.set('X-Order-Token', token);
    };
    const expired = signToken(secret, 'order', {
      subject: placed.order_id,
      tenantId: demo.tenant.id,
      ttlSeconds: 60,
      now: new Date(Date.now() - 3_600_000),
    });
    const bookingPurpose = signToken(secret, 'booking', {
      subject: placed.order_id,
      tenantId: demo.tenant.id,
      ttlSeconds: 600,
    });
    const unknownId = randomUUID();
    const forUnknown = signToken(secret, 'order', { subject: unknownId, tenantId: demo.tenant.id, ttlSeconds: 600 });

    const answers = await Promise.all([
      view(placed.order_id),
      view(placed.order_id, expired),
      view(placed.order_id, bookingPurpose),
      view(unknownId, forUnknown),
      view('not-a-uuid', placed.order_token),
      view(placed.order_id, placed.order_token),
    ]);
    expect(answers.map((a) => [a.status, a.body.error])).toEqual([
      [401, 'invalid_token'],
      [401, 'token_expired'],
      [401, 'invalid_token'],
      [404, 'order_not_found'],
      [404, 'order_not_found'],
      [200, undefined],
    ]);
    expect(answers[5]!.body).toMatchObject({ status: 'pending_payment', paid_at: null, wallet_id: placed.wallet_id });
  });
});

describe('payments an order cannot keep', () => {
  it('when the amount received is not the order total, then the order is cancelled for review and the payment refunded, never funded', async () => {
    const placed = await topUp(2200);
    const intent = fake.succeed(placed.payment_intent_id);
    // What Stripe received differs from the order: its refund gives back what it received.
    intent.amount_received = 2100;
    const res = await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }));
    expect(res.status).toBe(200);

    const row = await order(placed.order_id);
    expect(row).toMatchObject({ status: 'cancelled', reviewReason: 'payment_mismatch', paidCents: 2100 });
    expect(row).toMatchObject({ refundedCents: 2100 });
    expect(row.refunds).toEqual([
      expect.objectContaining({ source: 'late_payment', status: 'succeeded', amountCents: 2100 }),
    ]);
    expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
    expect(await events(placed.order_id, 'refund.created')).toHaveLength(1);
    expect(await events(placed.wallet_id, 'wallet.funded')).toHaveLength(0);
  });

  it('when Stripe fails the refund of a late payment, then the notification fails and its redeliveries refund it once', async () => {
    const placed = await topUp(1900);
    await t.deps.db.order.update({ where: { id: placed.order_id }, data: { payBy: new Date(Date.now() - 1000) } });
    await cancelUnpaidOrders({ db: t.deps.db, stripe: t.deps.stripe });
    const intent = fake.succeed(placed.payment_intent_id);
    const signed = signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET });
    // The SDK tries three times (maxNetworkRetries 2): fail them all.
    fake.failNextRefunds(3);

    expect((await deliverStripeEvent(t, signed)).status).toBe(500);
    const kept = await order(placed.order_id);
    expect(kept).toMatchObject({ reviewReason: 'paid_after_cancelled', refundedCents: 0 });
    expect(kept.refunds).toHaveLength(0);

    const replies = await Promise.all([
      ...Array.from({ length: 4 }, () => deliverStripeEvent(t, signed)),
      deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET })),
    ]);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
    const refunded = await order(placed.order_id);
    expect(refunded).toMatchObject({ status: 'cancelled', refundedCents: 1900 });
    expect(refunded.refunds).toEqual([
      expect.objectContaining({ source: 'late_payment', amountCents: 1900, providerRefundId: fake.refunds.at(-1)!.id }),
    ]);
    expect(await events(placed.order_id, 'refund.created')).toHaveLength(1);
    expect(await events(placed.wallet_id, 'wallet.funded')).toHaveLength(0);
  });
});

describe('a disputed top-up', () => {
  it('when a partly spent top-up is disputed and Stripe notifies it many times at once, then the funding is returned once and review is required for what was spent', async () => {
    const placed = await topUp(3000);
    const intent = fake.succeed(placed.payment_intent_id);
    await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }));
    await spend(placed.wallet_id, 1200);

    const disputeId = `dp_${randomUUID().replaceAll('-', '')}`;
    const same = signedDisputeCreatedEvent(intent, 3000, { secret: TEST_WEBHOOK_SECRET, disputeId });
    const notices = [
      ...Array.from({ length: 10 }, () => same),
      ...Array.from({ length: 3 }, () =>
        signedDisputeCreatedEvent(intent, 3000, { secret: TEST_WEBHOOK_SECRET, disputeId }),
      ),
    ];
    const replies = await Promise.all(notices.map((signed) => deliverStripeEvent(t, signed)));
    expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));

    const returned = await events(placed.wallet_id, 'wallet.funding_returned');
    expect(returned).toHaveLength(1);
    expect(returned[0]!.data).toMatchObject({
      order_id: placed.order_id,
      amount_cents: 3000,
      debited_cents: 1800,
      shortfall_cents: 1200,
      balance_cents: 0,
      channel: 'online',
      reason: 'dispute',
    });
    const review = await events(placed.wallet_id, 'wallet.refund_review_required');
    expect(review).toHaveLength(1);
    expect(review[0]!.data).toMatchObject({ debited_cents: 1800, shortfall_cents: 1200, reason: 'dispute' });

    const row = await order(placed.order_id);
    expect(row).toMatchObject({ status: 'paid', refundedCents: 3000 });
    expect(row.refunds).toEqual([
      expect.objectContaining({
        source: 'dispute',
        status: 'succeeded',
        amountCents: 3000,
        debitedCents: 1800,
        shortfallCents: 1200,
        providerRefundId: disputeId,
      }),
    ]);
    // A dispute is no refund of ours: no refund.created.
    expect(await events(placed.order_id, 'refund.created')).toHaveLength(0);

    const wallet = await t.deps.db.wallet.findUniqueOrThrow({ where: { id: placed.wallet_id } });
    const lots = await t.deps.db.walletLot.aggregate({
      where: { walletId: placed.wallet_id },
      _sum: { remainingCents: true },
    });
    expect(wallet).toMatchObject({ balanceCents: 0, heldCents: 0 });
    expect(lots._sum.remainingCents).toBe(0);
  });
});
