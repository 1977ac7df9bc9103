import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  createTestApp,
  deliverStripeEvent,
  fakeStripeClient,
  pendingRecurringMembership,
  seedMembershipPlan,
  seedTenant,
  signedBillingEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type FakeInvoice,
  type FakeStripe,
  type FakeSubscription,
  type TestApp,
} from '@booking/test-kit';

// The time between Stripe starting a renewed period and the renewal being paid: about an hour
// while its invoice is a draft, days while it is past due. The subscription is already in the
// new period then, so whatever else happens meanwhile (a paid upgrade, a plan change at period
// end) must not take the period for paid, nor the renewal just begun for the period's end.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
});
afterEach(() => fake.billing.moveClockTo(null));
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

const DAY = 86_400;

const paid = (invoice: FakeInvoice) => signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET });
const failed = (invoice: FakeInvoice) =>
  signedBillingEvent('invoice.payment_failed', invoice, { secret: TEST_WEBHOOK_SECRET });
const updated = (subscription: FakeSubscription) =>
  signedBillingEvent('customer.subscription.updated', subscription, { secret: TEST_WEBHOOK_SECRET });

async function deliver(...events: { payload: string; signature: string }[]) {
  for (const event of events) {
    const answer = await deliverStripeEvent(t, event);
    expect(answer.status).toBe(200);
  }
}

const events = (membershipId: string, name: string) =>
  t.deps.db.event.findMany({ where: { entityId: membershipId, name }, orderBy: { createdAt: 'asc' } });
const membershipOf = (id: string) => t.deps.db.membership.findUniqueOrThrow({ where: { id } });
const at = (seconds: number) => new Date(seconds * 1000);

/**
 * A monthly membership bought 32 days ago, its first invoice paid then: its renewal (`renewsAt`,
 * one to four days ago) is due. The renewal is left to the test.
 */
async function renewalDue() {
  fake.billing.moveClockTo(Math.floor(Date.now() / 1000) - 32 * DAY);
  const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id, { priceCents: 3_000 });
  const first = fake.billing.payFirstInvoice(m.subscriptionId);
  fake.billing.moveClockTo(null);
  await deliver(paid(first.invoice));
  const before = await membershipOf(m.membershipId);
  expect(before.expiresAt!.getTime()).toBeLessThan(Date.now());
  return { ...m, before, renewsAt: before.expiresAt! };
}

/** A dearer monthly plan, its Price in the fake Stripe. */
async function plusPlan() {
  const stripe = fakeStripeClient(fake);
  const product = await stripe.products.create({ name: 'Plus' });
  const price = await stripe.prices.create({
    product: product.id,
    unit_amount: 5_000,
    currency: 'eur',
    recurring: { interval: 'month' },
  });
  return seedMembershipPlan(t.deps.db, demo.tenant.id, {
    billing: 'recurring',
    priceCents: 5_000,
    currency: 'EUR',
    interval: 'month',
    stripePriceId: price.id,
  });
}

const planChange = (membershipId: string, body: object) =>
  request(t.app)
    .post(`/api/v1/memberships/${membershipId}/plan-change`)
    .set('Authorization', bearer(demo.api_keys.manager))
    .send(body);

/** Upgrades now; Stripe bills the rest of the period at once and is paid. Returns that invoice. */
async function upgradeNow(membershipId: string, subscriptionId: string) {
  const plus = await plusPlan();
  const asked = await planChange(membershipId, { to_plan_id: plus.id, when: 'now' });
  expect(asked.status).toBe(201);
  const subscription = fake.billing.subscriptions.get(subscriptionId)!;
  const invoice = structuredClone(fake.billing.invoices.get(subscription.latest_invoice!)!);
  expect(invoice).toMatchObject({ billing_reason: 'subscription_update', status: 'paid' });
  return { plus, invoice, subscription: structuredClone(subscription) };
}

describe('a renewal begun but not paid yet', () => {
  it('when the member upgrades now and the upgrade is paid, then neither period_start nor expires_at moves (notified, or read again later); the renewal paid afterwards gives the period from its start', async () => {
    const m = await renewalDue();
    const cycled = fake.billing.cycle(m.subscriptionId, 'later');
    const period = cycled.subscription.items.data[0]!;
    expect(at(period.current_period_start)).toEqual(m.renewsAt);
    await deliver(updated(cycled.subscription));

    const upgrade = await upgradeNow(m.membershipId, m.subscriptionId);
    // The upgrade bills from the change to the period's end, not the period.
    const line = upgrade.invoice.lines.data.at(-1)!;
    expect(line.period.start).toBeGreaterThan(period.current_period_start);
    expect(line.period.end).toBe(period.current_period_end);
    await deliver(paid(upgrade.invoice));
    const afterUpgrade = { status: 'active', periodStart: m.before.periodStart, expiresAt: m.renewsAt };
    expect(await membershipOf(m.membershipId)).toMatchObject({ ...afterUpgrade, planId: upgrade.plus.id });
    // Read again with the upgrade's invoice the newest (already applied): still not the period's payment.
    await deliver(updated(upgrade.subscription));
    expect(await membershipOf(m.membershipId)).toMatchObject(afterUpgrade);

    const renewal = fake.billing.retryInvoice(cycled.invoice!.id, { outcome: 'paid' });
    await deliver(paid(renewal.invoice));
    expect(await membershipOf(m.membershipId)).toMatchObject({
      status: 'active',
      planId: upgrade.plus.id,
      periodStart: m.renewsAt,
      expiresAt: at(period.current_period_end),
    });
    expect(await events(m.membershipId, 'membership.renewed')).toHaveLength(1);
  });

  it('when the renewal is paid first and the member then upgrades now, then the period is the renewal’s and the upgrade leaves it', async () => {
    const m = await renewalDue();
    const cycled = fake.billing.cycle(m.subscriptionId, 'later');
    const period = cycled.subscription.items.data[0]!;
    const renewal = fake.billing.retryInvoice(cycled.invoice!.id, { outcome: 'paid' });
    await deliver(paid(renewal.invoice));
    const renewed = { status: 'active', periodStart: m.renewsAt, expiresAt: at(period.current_period_end) };
    expect(await membershipOf(m.membershipId)).toMatchObject(renewed);

    const upgrade = await upgradeNow(m.membershipId, m.subscriptionId);
    await deliver(paid(upgrade.invoice), updated(upgrade.subscription));
    expect(await membershipOf(m.membershipId)).toMatchObject({ ...renewed, planId: upgrade.plus.id });
  });

  it('when staff end the membership now after a paid upgrade while the renewal was still unpaid, then membership.ended reports the period before as paid through, and the upgrade’s money is kept', async () => {
    const m = await renewalDue();
    const cycled = fake.billing.cycle(m.subscriptionId, 'later');
    await deliver(updated(cycled.subscription));
    const upgrade = await upgradeNow(m.membershipId, m.subscriptionId);
    await deliver(paid(upgrade.invoice));

    const ended = await request(t.app)
      .post(`/api/v1/memberships/${m.membershipId}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ at: 'now' });
    expect(ended.status).toBe(200);
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'ended', expiresAt: m.renewsAt });
    expect((await events(m.membershipId, 'membership.ended')).map((event) => event.data)).toEqual([
      expect.objectContaining({ paid_through: m.renewsAt.toISOString() }),
    ]);
    const row = await t.deps.db.membershipInvoice.findUniqueOrThrow({
      where: { stripeInvoiceId: upgrade.invoice.id },
    });
    expect(row).toMatchObject({ status: 'paid', reviewReason: null, refundedAt: null });
  });

  it('when the renewal failed (past due) and the member upgrades now days later, then the paid upgrade moves nothing; the renewal paid on a retry gives the period from its start', async () => {
    const m = await renewalDue();
    const cycled = fake.billing.cycle(m.subscriptionId, { outcome: 'failed' });
    await deliver(failed(cycled.invoice!), updated(cycled.subscription));
    expect(await membershipOf(m.membershipId)).toMatchObject({ status: 'past_due', expiresAt: m.renewsAt });
    const period = cycled.subscription.items.data[0]!;

    const upgrade = await upgradeNow(m.membershipId, m.subscriptionId);
    await deliver(paid(upgrade.invoice), updated(upgrade.subscription));
    expect(await membershipOf(m.membershipId)).toMatchObject({
      planId: upgrade.plus.id,
      periodStart: m.before.periodStart,
      expiresAt: m.renewsAt,
    });

    const retried = fake.billing.retryInvoice(cycled.invoice!.id, { outcome: 'paid' });
    await deliver(paid(retried.invoice));
    expect(await membershipOf(m.membershipId)).toMatchObject({
      status: 'active',
      periodStart: m.renewsAt,
      expiresAt: at(period.current_period_end),
    });
    expect((await events(m.membershipId, 'membership.renewed')).map((event) => event.data)).toEqual([
      expect.objectContaining({
        period_start: m.renewsAt.toISOString(),
        period_end: at(period.current_period_end).toISOString(),
      }),
    ]);
  });

  it('when a plan change at period end is asked, then it takes effect at the end of the period Stripe is in, not at the renewal just begun: in the answer, plan_change_requested and plan_changed', async () => {
    const m = await renewalDue();
    const cycled = fake.billing.cycle(m.subscriptionId, 'later');
    await deliver(updated(cycled.subscription));
    const periodEnd = at(cycled.subscription.items.data[0]!.current_period_end);
    const plus = await plusPlan();

    const asked = await planChange(m.membershipId, { to_plan_id: plus.id, when: 'period_end' });
    expect(asked.status).toBe(201);
    expect(asked.body).toMatchObject({ status: 'pending', effective_at: periodEnd.toISOString() });
    expect((await events(m.membershipId, 'membership.plan_change_requested')).map((event) => event.data)).toEqual([
      expect.objectContaining({ change_id: asked.body.change_id, effective_at: periodEnd.toISOString() }),
    ]);

    // The renewal begun before the change bills the old price; the next one applies the change.
    const renewal = fake.billing.retryInvoice(cycled.invoice!.id, { outcome: 'paid' });
    await deliver(paid(renewal.invoice));
    expect(await membershipOf(m.membershipId)).toMatchObject({ planId: m.planId, expiresAt: periodEnd });
    const next = fake.billing.cycle(m.subscriptionId, { outcome: 'paid' });
    await deliver(paid(next.invoice!));
    expect(await membershipOf(m.membershipId)).toMatchObject({ planId: plus.id, priceCents: 5_000 });
    expect((await events(m.membershipId, 'membership.plan_changed')).map((event) => event.data)).toEqual([
      expect.objectContaining({ invoice_id: next.invoice!.id, effective_at: periodEnd.toISOString() }),
    ]);
  });
});
