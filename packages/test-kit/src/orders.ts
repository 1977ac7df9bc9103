import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { generateGiftCardCode, hashGiftCardCode } from '@booking/signing';
import { lockWallet } from '@booking/api/src/locks';
import { creditWallet } from '@booking/api/src/wallets/wallet-ledger';
import { clientIp, createTestApp, type TestApp } from './app';
import { deliverStripeEvent, stripeEnv, TEST_WEBHOOK_SECRET } from './card-payments';
import { signedPaymentSucceededEvent, startFakeStripe, stopFakeStripe, type FakeStripe } from './fake-stripe';
import { bearer } from './operators';

// Orders made the way the tests of money make them: the app on a fake Stripe, a till shift,
// till orders, online wallet top-ups (paid or not), wallets with value and gift cards.

/** A fake Stripe, and the app in-process pointed at it (with any further settings). */
export async function startStripeTestApp(env: Record<string, string> = {}): Promise<{ fake: FakeStripe; t: TestApp }> {
  const fake = await startFakeStripe();
  return { fake, t: createTestApp({ ...stripeEnv(fake.url), ...env }) };
}

/** Closes the app, then stops its fake Stripe. */
export async function stopStripeTestApp(t: TestApp, fake: FakeStripe): Promise<void> {
  await t.close();
  await stopFakeStripe(fake);
}

const staffOf = (tenant: DemoTenant) => ({ Authorization: bearer(tenant.api_keys.staff) });

/** Opens a till shift as the tenant's staff; fails unless it opened. Its id. */
export async function openShift(t: TestApp, tenant: DemoTenant, startingCashCents = 0): Promise<string> {
  const res = await request(t.app)
    .post('/api/pos/shifts/open')
    .set(staffOf(tenant))
    .send({ starting_cash_cents: startingCashCents });
  expect(res.status).toBe(201);
  return res.body.shift_id as string;
}

/** Opens a USD till order with these lines (as the tenant's staff unless `headers`); fails unless it was created. */
export async function openTillOrder(
  t: TestApp,
  tenant: DemoTenant,
  shiftId: string,
  lines: object[],
  headers: Record<string, string> = staffOf(tenant),
): Promise<{ order_id: string; total_cents: number }> {
  const res = await request(t.app)
    .post('/api/pos/orders')
    .set(headers)
    .send({ shift_id: shiftId, currency: 'USD', lines });
  expect(res.status).toBe(201);
  return res.body as { order_id: string; total_cents: number };
}

/** Posts an online USD wallet top-up for the buyer, from `ip`; the answer as it came. */
export const postWalletTopUp = (
  t: TestApp,
  tenant: DemoTenant,
  amountCents: number,
  customer: Record<string, string>,
  ip = clientIp(),
) =>
  request(t.app)
    .post('/api/orders/wallet-topups')
    .set('X-Forwarded-For', ip)
    .send({ tenant: tenant.tenant.slug, amount_cents: amountCents, currency: 'USD', customer });

export interface WalletTopUpOrder {
  order_id: string;
  wallet_id: string;
  customer_id: string;
  payment_intent_id: string;
  order_token: string;
  pay_by: string;
}

/** An online wallet top-up, not yet paid; fails unless it was created. */
export async function walletTopUp(
  t: TestApp,
  tenant: DemoTenant,
  amountCents: number,
  customer: Record<string, string>,
  ip = clientIp(),
): Promise<WalletTopUpOrder> {
  const res = await postWalletTopUp(t, tenant, amountCents, customer, ip);
  expect(res.status).toBe(201);
  return res.body as WalletTopUpOrder;
}

/** An online wallet top-up paid through the fake Stripe: its order, wallet and PaymentIntent. */
export async function paidWalletTopUp(
  t: TestApp,
  fake: FakeStripe,
  tenant: DemoTenant,
  amountCents: number,
  customer: Record<string, string>,
) {
  const res = await postWalletTopUp(t, tenant, amountCents, customer);
  const intent = fake.succeed(res.body.payment_intent_id);
  await deliverStripeEvent(t, signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }));
  return { orderId: res.body.order_id as string, walletId: res.body.wallet_id as string, intent };
}

/**
 * A new customer's wallet opened by staff, holding `cents` of value credited straight to the
 * ledger (as a till load), and a token of `tokenKind` to spend it.
 */
export async function openFundedWallet(
  t: TestApp,
  tenant: DemoTenant,
  cents: number,
  options: { currency?: string; email?: string; firstName?: string; tokenKind?: 'card' | 'qr' } = {},
) {
  const customer = await t.deps.db.customer.create({
    data: {
      tenantId: tenant.tenant.id,
      email: options.email ?? `wallet-${randomUUID()}@example.com`,
      firstName: options.firstName ?? 'Pat',
    },
  });
  const opened = await request(t.app)
    .post('/api/v1/wallets')
    .set(staffOf(tenant))
    .send({ customer_id: customer.id, currency: options.currency ?? 'USD' });
  const walletId = opened.body.wallet_id as string;
  if (cents > 0) {
    await t.deps.db.$transaction(async (tx) => {
      const wallet = (await lockWallet(tx, { tenantId: tenant.tenant.id }, walletId))!;
      await creditWallet(tx, wallet, { kind: 'fund', source: 'pos_load', amountCents: cents, expiresAt: null });
    });
  }
  const token = await request(t.app)
    .post(`/api/v1/wallets/${walletId}/tokens`)
    .set(staffOf(tenant))
    .send({ kind: options.tokenKind ?? 'card' });
  return {
    walletId,
    customerId: customer.id,
    secret: token.body.secret as string,
    tokenId: token.body.token_id as string,
  };
}

/** A gift card of the tenant holding `cents`, written straight to the database: its code and id. */
export async function seedGiftCard(t: TestApp, tenant: DemoTenant, cents: number, currency = 'USD') {
  const code = generateGiftCardCode();
  const card = await t.deps.db.giftCard.create({
    data: {
      tenantId: tenant.tenant.id,
      codeHash: hashGiftCardCode(code),
      codeLast4: code.slice(-4),
      currency,
      balanceCents: cents,
    },
  });
  return { code, id: card.id };
}

/** A succeeded PaymentIntent the till took through (fake) Stripe for a card tender of the order. */
export async function tillCardPayment(
  t: TestApp,
  fake: FakeStripe,
  tenant: DemoTenant,
  orderId: string,
  cents: number,
) {
  const created = await t.deps.stripe!.paymentIntents.create({
    amount: cents,
    currency: 'usd',
    metadata: { tenant_id: tenant.tenant.id, purpose: 'pos_order', order_id: orderId },
  });
  return fake.succeed(created.id);
}
