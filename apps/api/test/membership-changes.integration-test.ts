import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  clientIp,
  createTestApp,
  deliverStripeEvent,
  keyIdOf,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  signedBillingEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type FakeStripe,
  type TestApp,
} from '@booking/test-kit';
import { applyPaidChange } from '../src/membership-changes/apply-paid-change';
import { applyPriceChanges } from '../src/membership-changes/apply-price-changes';
import * as followPlanPriceModule from '../src/membership-changes/follow-plan-price';
import { ANY_TENANT, lockMembership } from '../src/locks';
import { issueManageToken } from '../src/memberships/member-token';

// Plan changes and operator price changes on the real PostgreSQL and Redis against the fake
// Stripe: a real subscription per membership, its item swapped as the change says, each event
// recorded exactly once by its trigger, and every refusal with its code.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const DAY = 86_400_000;
const HOUR = 3_600_000;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
  other = await seedTenant(t.deps);
});
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

const stripe = () => t.deps.stripe!;

/** A recurring plan with its own product and monthly Price in the fake Stripe. */
async function recurringPlan(
  priceCents: number,
  options: { tenantId?: string; interval?: 'month' | 'year'; active?: boolean; currency?: string } = {},
) {
  const interval = options.interval ?? 'month';
  const currency = options.currency ?? 'EUR';
  const product = await stripe().products.create({ name: `Plan ${priceCents}` });
  const price = await stripe().prices.create({
    product: product.id,
    unit_amount: priceCents,
    currency: currency.toLowerCase(),
    recurring: { interval },
  });
  const plan = await seedMembershipPlan(t.deps.db, options.tenantId ?? demo.tenant.id, {
    billing: 'recurring',
    priceCents,
    currency,
    interval,
    stripePriceId: price.id,
  });
  await t.deps.db.membershipPlan.update({
    where: { id: plan.id },
    data: { stripeProductId: product.id, active: options.active ?? true },
  });
  return { ...plan, stripeProductId: product.id };
}

/** A live membership of `plan` with an active subscription at the plan's Price. */
async function member(plan: Awaited<ReturnType<typeof recurringPlan>>, status: 'active' | 'frozen' = 'active') {
  const customer = await stripe().customers.create({ email: `m-${randomUUID()}@example.com` });
  const subscription = await stripe().subscriptions.create({
    customer: customer.id,
    items: [{ price: plan.stripePriceId! }],
    payment_behavior: 'default_incomplete',
  });
  fake.billing.payFirstInvoice(subscription.id);
  const periodEnd = fake.billing.subscriptions.get(subscription.id)!.items.data[0]!.current_period_end;
  return seedMembership(t.deps.db, plan, {
    status,
    stripeSubscriptionId: subscription.id,
    stripeCustomerId: customer.id,
    expiresAt: new Date(periodEnd * 1000),
  });
}

const itemPrice = (subscriptionId: string) => fake.billing.subscriptions.get(subscriptionId)!.items.data[0]!.price.id;

const eventsOf = (membershipId: string, name: string) =>
  t.deps.db.event.findMany({ where: { tenantId: demo.tenant.id, entityId: membershipId, name } });

const planChange = (membershipId: string, body: object, key = demo.api_keys.manager) =>
  request(t.app).post(`/api/v1/memberships/${membershipId}/plan-change`).set(auth(key)).send(body);

describe('plan change at period end', () => {
  it('when a manager asks for another plan at period end, then the subscription bills the new Price from the renewal and membership.plan_change_requested is recorded once', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(5_000);
    const m = await member(basic);
    const res = await planChange(m.id, { to_plan_id: plus.id, when: 'period_end' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'plan_change',
      status: 'pending',
      when: 'period_end',
      from_plan_id: basic.id,
      to_plan_id: plus.id,
      from_price_cents: 3_000,
      to_price_cents: 5_000,
      effective_at: m.expiresAt!.toISOString(),
      requested_by: 'staff',
    });
    expect(itemPrice(m.stripeSubscriptionId!)).toBe(plus.stripePriceId);
    const row = await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: res.body.change_id } });
    expect(row.providerAppliedAt).not.toBeNull();
    // Still on the old plan until the renewal is paid.
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: m.id } })).planId).toBe(basic.id);
    const events = await eventsOf(m.id, 'membership.plan_change_requested');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      membership_id: m.id,
      plan_id: basic.id,
      change_id: row.id,
      from_plan_id: basic.id,
      to_plan_id: plus.id,
      from_price_cents: 3_000,
      to_price_cents: 5_000,
      currency: 'EUR',
      when: 'period_end',
      effective_at: m.expiresAt!.toISOString(),
      requested_by: 'staff',
      actor_user_id: await keyIdOf(t, demo.api_keys.manager),
    });

    // The renewal bills the new Price; its paid invoice applies the change.
    const { invoice } = fake.billing.cycle(m.stripeSubscriptionId!, { outcome: 'paid' });
    const line = invoice!.lines.data[0]!;
    await t.deps.db.$transaction(async (tx) => {
      const locked = (await lockMembership(tx, ANY_TENANT, m.id))!;
      await applyPaidChange(tx, locked, {
        invoiceId: invoice!.id,
        priceId: line.pricing?.price_details?.price ?? plus.stripePriceId,
        periodStart: new Date(line.period.start * 1000),
        amountCents: invoice!.amount_paid,
      });
    });
    expect(invoice!.amount_paid).toBe(5_000);
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: m.id } });
    expect(after).toMatchObject({ planId: plus.id, priceCents: 5_000, stripePriceId: plus.stripePriceId });
    const changed = await eventsOf(m.id, 'membership.plan_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.data).toMatchObject({ plan_id: plus.id, invoice_id: invoice!.id, amount_cents: 5_000 });
  });

  it('when the member asks with their X-Membership-Token, then the change is theirs (requested_by member, no actor)', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const m = await member(basic);
    const res = await request(t.app)
      .post(`/api/v1/memberships/${m.id}/plan-change`)
      .set('X-Membership-Token', issueManageToken(t.deps.config, m))
      .send({ to_plan_id: plus.id, when: 'period_end' });
    expect(res.status).toBe(201);
    expect(res.body.requested_by).toBe('member');
    const events = await eventsOf(m.id, 'membership.plan_change_requested');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ requested_by: 'member', actor_user_id: null });
  });

  it('when two plan changes are asked for at once, then one is 201 and the other 409 change_pending, with one change and one event', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const premium = await recurringPlan(6_000);
    const m = await member(basic);
    const answers = await Promise.all([
      planChange(m.id, { to_plan_id: plus.id, when: 'period_end' }),
      planChange(m.id, { to_plan_id: premium.id, when: 'period_end' }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.status === 409)!.body.error).toBe('change_pending');
    expect(await t.deps.db.membershipChange.count({ where: { membershipId: m.id } })).toBe(1);
    expect(await eventsOf(m.id, 'membership.plan_change_requested')).toHaveLength(1);
  });

  it('when a change is refused, then each refusal has its code and nothing is written or sent to Stripe', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const yearly = await recurringPlan(30_000, { interval: 'year' });
    const dollars = await recurringPlan(4_000, { currency: 'USD' });
    const retired = await recurringPlan(4_500, { active: false });
    const foreignPlan = await recurringPlan(4_000, { tenantId: other.tenant.id });
    const fixed = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const fixedMember = await seedMembership(t.deps.db, fixed);
    const m = await member(basic);
    const frozen = await member(basic, 'frozen');
    const withFreeze = await member(basic);
    await t.deps.db.membershipFreeze.create({
      data: {
        membershipId: withFreeze.id,
        startsOn: new Date(Date.now() + 5 * DAY),
        endsOn: new Date(Date.now() + 20 * DAY),
        status: 'booked',
        requestedBy: 'staff',
      },
    });
    const updatesBefore = fake.requestsTo('POST', /^\/v1\/subscriptions\/sub_/).length;
    const cases: [string, object, number, string][] = [
      [fixedMember.id, { to_plan_id: plus.id, when: 'period_end' }, 409, 'change_not_allowed'],
      [m.id, { to_plan_id: foreignPlan.id, when: 'period_end' }, 404, 'membership_plan_not_found'],
      [m.id, { to_plan_id: randomUUID(), when: 'period_end' }, 404, 'membership_plan_not_found'],
      [m.id, { to_plan_id: retired.id, when: 'period_end' }, 409, 'plan_not_active'],
      [m.id, { to_plan_id: yearly.id, when: 'period_end' }, 400, 'plan_invalid'],
      [m.id, { to_plan_id: dollars.id, when: 'period_end' }, 400, 'plan_invalid'],
      [m.id, { to_plan_id: fixed.id, when: 'period_end' }, 400, 'plan_invalid'],
      [m.id, { to_plan_id: basic.id, when: 'period_end' }, 409, 'change_not_allowed'],
      [m.id, { to_plan_id: plus.id, when: 'later' }, 400, 'invalid_body'],
      [frozen.id, { to_plan_id: plus.id, when: 'period_end' }, 409, 'membership_not_active'],
      [withFreeze.id, { to_plan_id: plus.id, when: 'period_end' }, 409, 'change_not_allowed'],
      [randomUUID(), { to_plan_id: plus.id, when: 'period_end' }, 404, 'membership_not_found'],
    ];
    for (const [id, body, status, code] of cases) {
      const res = await planChange(id, body);
      expect({ id, body, status: res.status, code: res.body.error }).toEqual({ id, body, status, code });
    }
    expect(fixedMember && (await planChange(fixedMember.id, { to_plan_id: plus.id, when: 'now' })).body.detail).toMatch(
      /buy|sell/,
    );
    // A downgrade cannot take effect now.
    const cheaper = await recurringPlan(2_000);
    expect((await planChange(m.id, { to_plan_id: cheaper.id, when: 'now' })).body.error).toBe('change_not_allowed');
    // Another tenant's key does not find the membership; staff keys are below manager.
    expect((await planChange(m.id, { to_plan_id: plus.id, when: 'period_end' }, other.api_keys.manager)).status).toBe(
      404,
    );
    expect((await planChange(m.id, { to_plan_id: plus.id, when: 'period_end' }, demo.api_keys.staff)).status).toBe(403);
    expect(fake.requestsTo('POST', /^\/v1\/subscriptions\/sub_/).length).toBe(updatesBefore);
    expect(
      await t.deps.db.membershipChange.count({ where: { membershipId: { in: [m.id, frozen.id, withFreeze.id] } } }),
    ).toBe(0);
  });
});

describe('withdrawing a plan change', () => {
  it('when a pending change is withdrawn (twice), then the subscription is back on the old Price and membership.plan_change_cancelled (withdrawn) is recorded once', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const m = await member(basic);
    expect((await planChange(m.id, { to_plan_id: plus.id, when: 'period_end' })).status).toBe(201);
    expect(itemPrice(m.stripeSubscriptionId!)).toBe(plus.stripePriceId);
    const [first, second] = await Promise.all([
      request(t.app).delete(`/api/v1/memberships/${m.id}/plan-change`).set(auth(demo.api_keys.manager)),
      request(t.app)
        .delete(`/api/v1/memberships/${m.id}/plan-change`)
        .set('X-Membership-Token', issueManageToken(t.deps.config, m)),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 404]);
    const ok = first.status === 200 ? first : second;
    expect(ok.body).toMatchObject({ status: 'cancelled', to_plan_id: plus.id });
    expect((first.status === 404 ? first : second).body.error).toBe('change_not_found');
    expect(itemPrice(m.stripeSubscriptionId!)).toBe(basic.stripePriceId);
    const events = await eventsOf(m.id, 'membership.plan_change_cancelled');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ change_id: ok.body.change_id, to_plan_id: plus.id, reason: 'withdrawn' });
    // With nothing pending, a new change can be asked for.
    expect((await planChange(m.id, { to_plan_id: plus.id, when: 'period_end' })).status).toBe(201);
  });

  it('when nothing is pending, or the membership is another tenant’s, then 404', async () => {
    const basic = await recurringPlan(3_000);
    const m = await member(basic);
    const none = await request(t.app)
      .delete(`/api/v1/memberships/${m.id}/plan-change`)
      .set(auth(demo.api_keys.manager));
    expect([none.status, none.body.error]).toEqual([404, 'change_not_found']);
    const foreign = await request(t.app)
      .delete(`/api/v1/memberships/${m.id}/plan-change`)
      .set(auth(other.api_keys.manager));
    expect([foreign.status, foreign.body.error]).toEqual([404, 'membership_not_found']);
  });
});

describe('upgrade now', () => {
  it('when an upgrade now is paid at once, then the invoice.paid notification applies it: membership.plan_changed once, however often it is delivered', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const m = await member(basic);

    const res = await planChange(m.id, { to_plan_id: plus.id, when: 'now' });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ when: 'now', status: 'pending' });
    const subscription = fake.billing.subscriptions.get(m.stripeSubscriptionId!)!;
    const invoice = fake.billing.invoices.get(subscription.latest_invoice!)!;
    expect([invoice.billing_reason, invoice.status, subscription.items.data[0]!.price.id]).toEqual([
      'subscription_update',
      'paid',
      plus.stripePriceId,
    ]);
    // Not withdrawable: it waits on its invoice.
    const withdraw = await request(t.app)
      .delete(`/api/v1/memberships/${m.id}/plan-change`)
      .set(auth(demo.api_keys.manager));
    expect([withdraw.status, withdraw.body.error]).toEqual([409, 'change_not_allowed']);

    const paid = signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET });
    const answers = await Promise.all([
      deliverStripeEvent(t, paid),
      deliverStripeEvent(t, paid),
      deliverStripeEvent(t, paid),
    ]);

    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const changed = await eventsOf(m.id, 'membership.plan_changed');
    expect(changed).toHaveLength(1);
    expect(changed[0]!.data).toMatchObject({
      change_id: res.body.change_id,
      from_plan_id: basic.id,
      to_plan_id: plus.id,
      invoice_id: invoice.id,
    });
    const row = await t.deps.db.membership.findUniqueOrThrow({ where: { id: m.id } });
    expect([row.planId, row.stripePriceId, row.priceCents]).toEqual([plus.id, plus.stripePriceId, 4_000]);
  });

  it('when the upgrade payment is declined, then it stays pending at Stripe; its expiry fails the change with plan_change_cancelled (payment_failed) once', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const m = await member(basic);
    fake.billing.failNextPayments(1);

    const res = await planChange(m.id, { to_plan_id: plus.id, when: 'now' });

    expect(res.status).toBe(201);
    expect(fake.billing.subscriptions.get(m.stripeSubscriptionId!)!.pending_update).not.toBeNull();
    const { subscription } = fake.billing.expirePendingUpdate(m.stripeSubscriptionId!);
    const expired = (id: string) =>
      signedBillingEvent('customer.subscription.pending_update_expired', subscription, {
        secret: TEST_WEBHOOK_SECRET,
        eventId: id,
      });
    const once = expired(`evt_${randomUUID()}`);
    const answers = await Promise.all([
      deliverStripeEvent(t, once),
      deliverStripeEvent(t, once),
      deliverStripeEvent(t, expired(`evt_${randomUUID()}`)),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const row = await t.deps.db.membershipChange.findUniqueOrThrow({ where: { id: res.body.change_id } });
    expect(row.status).toBe('failed');
    const events = await eventsOf(m.id, 'membership.plan_change_cancelled');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ change_id: row.id, reason: 'payment_failed', actor_user_id: null });
    expect(await eventsOf(m.id, 'membership.plan_change_requested')).toHaveLength(1);
    expect(await eventsOf(m.id, 'membership.plan_changed')).toHaveLength(0);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: m.id } })).planId).toBe(basic.id);
  });

  it('when Stripe refuses the change, then the change is failed without any event and a new request is possible', async () => {
    const basic = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const plusPrice = plus.stripePriceId!;
    const m = await member(basic);
    // A price Stripe does not know: it refuses the update (404 resource_missing), as it refuses any bad request.
    await t.deps.db.membershipPlan.update({
      where: { id: plus.id },
      data: { stripePriceId: `price_${randomUUID().replaceAll('-', '')}` },
    });
    const res = await planChange(m.id, { to_plan_id: plus.id, when: 'now' });
    expect([res.status, res.body.error]).toEqual([502, 'payment_provider_error']);
    const rows = await t.deps.db.membershipChange.findMany({ where: { membershipId: m.id } });
    expect(rows.map((r) => r.status)).toEqual(['failed']);
    expect(await t.deps.db.event.count({ where: { entityId: m.id } })).toBe(0);
    await t.deps.db.membershipPlan.update({ where: { id: plus.id }, data: { stripePriceId: plusPrice } });
    expect((await planChange(m.id, { to_plan_id: plus.id, when: 'period_end' })).status).toBe(201);
  });
});

describe('operator price changes', () => {
  const tomorrow = () => new Date(Date.now() + DAY).toISOString().slice(0, 10);
  const priceChange = (planId: string, body: object, key = demo.api_keys.admin) =>
    request(t.app).post(`/api/v1/membership-plans/${planId}/price-changes`).set(auth(key)).send(body);

  it('when an admin changes a plan’s price, then each live member gets one price_change_scheduled, one with a change pending is skipped, and the job swaps each subscription once', async () => {
    const plan = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const a = await member(plan);
    const b = await member(plan, 'frozen');
    const busy = await member(plan);
    expect((await planChange(busy.id, { to_plan_id: plus.id, when: 'period_end' })).status).toBe(201);
    const ended = await seedMembership(t.deps.db, plan, { status: 'ended' });
    const effectiveOn = tomorrow();

    const res = await priceChange(plan.id, { price_cents: 3_500, effective_on: effectiveOn });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      plan_id: plan.id,
      from_price_cents: 3_000,
      to_price_cents: 3_500,
      currency: 'EUR',
      effective_at: `${effectiveOn}T00:00:00.000Z`,
    });
    const newPrice = fake.billing.prices.get(res.body.stripe_price_id)!;
    expect(newPrice).toMatchObject({ unit_amount: 3_500, product: plan.stripeProductId });
    expect(res.body.scheduled.map((s: { membership_id: string }) => s.membership_id).sort()).toEqual(
      [a.id, b.id].sort(),
    );
    expect(res.body.skipped).toEqual([{ membership_id: busy.id, reason: 'change_pending' }]);
    for (const m of [a, b]) {
      const events = await eventsOf(m.id, 'membership.price_change_scheduled');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({
        membership_id: m.id,
        from_price_cents: 3_000,
        to_price_cents: 3_500,
        currency: 'EUR',
        interval: 'month',
        effective_at: `${effectiveOn}T00:00:00.000Z`,
        actor_user_id: await keyIdOf(t, demo.api_keys.admin),
      });
    }
    for (const m of [busy, ended]) expect(await eventsOf(m.id, 'membership.price_change_scheduled')).toHaveLength(0);
    const stored = await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id } });
    expect(stored).toMatchObject({ priceCents: 3_000, nextPriceCents: 3_500, nextStripePriceId: newPrice.id });

    // A second change while one is scheduled is refused.
    const again = await priceChange(plan.id, { price_cents: 3_900, effective_on: effectiveOn });
    expect([again.status, again.body.error]).toEqual([409, 'change_pending']);

    // Two job runs at once: each subscription is swapped once.
    const swaps = () =>
      fake
        .requestsTo('POST', /^\/v1\/subscriptions\/sub_/)
        .filter(
          (r) => r.idempotencyKey?.endsWith('-swap') && [a, b].some((m) => r.path.includes(m.stripeSubscriptionId!)),
        );
    await Promise.all([applyPriceChanges(t.deps), applyPriceChanges(t.deps)]);
    expect(swaps()).toHaveLength(2);
    for (const m of [a, b]) {
      expect(itemPrice(m.stripeSubscriptionId!)).toBe(newPrice.id);
      const change = await t.deps.db.membershipChange.findFirstOrThrow({
        where: { membershipId: m.id, kind: 'price_change' },
      });
      expect(change.providerAppliedAt).not.toBeNull();
      expect(change.status).toBe('pending');
    }
    await applyPriceChanges(t.deps);
    expect(swaps()).toHaveLength(2);

    // From effective_on the plan's price for new buyers is the new one.
    await applyPriceChanges(t.deps, new Date(Date.parse(`${effectiveOn}T00:00:00Z`) + 1000));
    expect(await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id } })).toMatchObject({
      priceCents: 3_500,
      stripePriceId: newPrice.id,
      nextPriceCents: null,
    });

    // The renewal at the new Price applies the change silently.
    const { invoice } = fake.billing.cycle(a.stripeSubscriptionId!, { outcome: 'paid' });
    expect(invoice!.amount_paid).toBe(3_500);
    await t.deps.db.$transaction(async (tx) => {
      const locked = (await lockMembership(tx, ANY_TENANT, a.id))!;
      await applyPaidChange(tx, locked, {
        invoiceId: invoice!.id,
        priceId: newPrice.id,
        periodStart: new Date(invoice!.lines.data[0]!.period.start * 1000),
        amountCents: invoice!.amount_paid,
      });
    });
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: a.id } })).toMatchObject({
      priceCents: 3_500,
      stripePriceId: newPrice.id,
    });
  });

  /** An online purchase of `plan`, unpaid: the membership is pending_payment on the plan's Price. */
  async function purchase(planId: string) {
    const res = await request(t.app)
      .post('/api/orders/memberships')
      .set('X-Forwarded-For', clientIp())
      .send({
        tenant: demo.tenant.slug,
        plan_id: planId,
        customer: { email: `buyer-${randomUUID()}@example.com`, first_name: 'Ada' },
      });
    expect(res.status).toBe(201);
    return res.body as { membership_id: string; subscription_id: string };
  }
  /** The first invoice paid, its invoice.paid notification delivered `times` times at once. */
  async function payFirst(subscriptionId: string, times = 1) {
    const { invoice } = fake.billing.payFirstInvoice(subscriptionId);
    const event = signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET });
    const answers = await Promise.all(Array.from({ length: times }, () => deliverStripeEvent(t, event)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(times).fill(200));
  }
  /** A purchase of `plan`, paid. */
  async function paidPurchase(planId: string) {
    const purchased = await purchase(planId);
    await payFirst(purchased.subscription_id);
    return purchased;
  }
  const priceChanges = (membershipId: string) =>
    t.deps.db.membershipChange.findMany({ where: { membershipId, kind: 'price_change' } });

  it('when members join the plan after its price change was scheduled (bought then, bought before but paid then, or plan-changed into it), then each gets one price_change_scheduled and the job moves it', async () => {
    const plan = await recurringPlan(3_000);
    const other = await recurringPlan(2_500);
    const pendingAtScheduling = await purchase(plan.id);
    const mover = await member(other);
    expect((await planChange(mover.id, { to_plan_id: plan.id, when: 'period_end' })).status).toBe(201);
    const effectiveOn = tomorrow();
    const res = await priceChange(plan.id, { price_cents: 3_500, effective_on: effectiveOn });
    expect([res.status, res.body.scheduled, res.body.skipped]).toEqual([201, [], []]);
    const newPrice: string = res.body.stripe_price_id;

    // Bought after the scheduling: the subscription starts on the plan's Price of the day.
    const late = await purchase(plan.id);
    expect(itemPrice(late.subscription_id)).toBe(plan.stripePriceId);
    await payFirst(late.subscription_id, 2);
    await payFirst(pendingAtScheduling.subscription_id);
    // The mover's renewal bills the plan it moved to, at that plan's Price of the day.
    const { invoice } = fake.billing.cycle(mover.stripeSubscriptionId!, { outcome: 'paid' });
    expect(
      (await deliverStripeEvent(t, signedBillingEvent('invoice.paid', invoice!, { secret: TEST_WEBHOOK_SECRET })))
        .status,
    ).toBe(200);
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: mover.id } })).toMatchObject({
      planId: plan.id,
      priceCents: 3_000,
    });
    const joined = [late.membership_id, pendingAtScheduling.membership_id, mover.id];

    // Two job runs at once: each joiner gets one change and one event, and its subscription is moved once.
    await Promise.all([applyPriceChanges(t.deps), applyPriceChanges(t.deps)]);
    await applyPriceChanges(t.deps);
    for (const id of joined) {
      const changes = await priceChanges(id);
      expect(changes).toHaveLength(1);
      expect(changes[0]).toMatchObject({
        status: 'pending',
        toPriceId: newPrice,
        fromPriceCents: 3_000,
        toPriceCents: 3_500,
        effectiveAt: new Date(`${effectiveOn}T00:00:00.000Z`),
      });
      expect(changes[0]!.providerAppliedAt).not.toBeNull();
      const events = await eventsOf(id, 'membership.price_change_scheduled');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({
        membership_id: id,
        plan_id: plan.id,
        change_id: changes[0]!.id,
        from_price_cents: 3_000,
        to_price_cents: 3_500,
        effective_at: `${effectiveOn}T00:00:00.000Z`,
        actor_user_id: await keyIdOf(t, demo.api_keys.admin),
      });
      const { stripeSubscriptionId } = await t.deps.db.membership.findUniqueOrThrow({ where: { id } });
      expect(itemPrice(stripeSubscriptionId!)).toBe(newPrice);
      const swaps = fake
        .requestsTo('POST', `/v1/subscriptions/${stripeSubscriptionId}`)
        .filter((r) => r.idempotencyKey === `membership-change-${changes[0]!.id}-swap`);
      expect(swaps).toHaveLength(1);
    }
  });

  it('when a purchase made before the new price took effect is paid after, then the job moves it to the plan’s price from its first renewal on a later day, never the one an hour away', async () => {
    const plan = await recurringPlan(3_000);
    const bought = await purchase(plan.id);
    const effectiveOn = tomorrow();
    const res = await priceChange(plan.id, { price_cents: 2_800, effective_on: effectiveOn });
    expect(res.status).toBe(201);
    const newPrice: string = res.body.stripe_price_id;
    const dayAfter = new Date(Date.parse(`${effectiveOn}T00:00:00Z`) + 1000);
    await applyPriceChanges(t.deps, dayAfter);
    expect(await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id } })).toMatchObject({
      priceCents: 2_800,
      stripePriceId: newPrice,
    });

    await payFirst(bought.subscription_id);
    expect(itemPrice(bought.subscription_id)).toBe(plan.stripePriceId);
    // The job first sees it an hour before a renewal (it was down, say): that renewal keeps the old price.
    const renewal = new Date(Date.parse(`${effectiveOn}T12:00:00Z`) + 5 * DAY);
    await t.deps.db.membership.update({ where: { id: bought.membership_id }, data: { expiresAt: renewal } });
    await applyPriceChanges(t.deps, new Date(renewal.getTime() - HOUR));
    const [change, ...more] = await priceChanges(bought.membership_id);
    expect(more).toHaveLength(0);
    const nextDay = new Date(Date.parse(`${effectiveOn}T00:00:00Z`) + 6 * DAY);
    expect(change).toMatchObject({ toPriceId: newPrice, toPriceCents: 2_800, effectiveAt: nextDay });
    expect(change!.providerAppliedAt).toBeNull();
    expect(itemPrice(bought.subscription_id)).toBe(plan.stripePriceId);
    const events = await eventsOf(bought.membership_id, 'membership.price_change_scheduled');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      change_id: change!.id,
      effective_at: nextDay.toISOString(),
      actor_user_id: await keyIdOf(t, demo.api_keys.admin),
    });
    // Once that renewal is paid, the subscription bills the new price from the next one.
    await t.deps.db.membership.update({
      where: { id: bought.membership_id },
      data: { expiresAt: new Date(renewal.getTime() + 30 * DAY) },
    });
    await applyPriceChanges(t.deps, new Date(renewal.getTime() + HOUR));
    expect(itemPrice(bought.subscription_id)).toBe(newPrice);

    // Its first renewal bills the new price, and its paid invoice applies the change.
    const { invoice } = fake.billing.cycle(bought.subscription_id, { outcome: 'paid' });
    expect(invoice!.amount_paid).toBe(2_800);
    await deliverStripeEvent(t, signedBillingEvent('invoice.paid', invoice!, { secret: TEST_WEBHOOK_SECRET }));
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: bought.membership_id } })).toMatchObject({
      priceCents: 2_800,
      stripePriceId: newPrice,
    });
    // New buyers now start on the new Price and have nothing to follow.
    const after = await purchase(plan.id);
    expect(itemPrice(after.subscription_id)).toBe(newPrice);
    await payFirst(after.subscription_id);
    await applyPriceChanges(t.deps, dayAfter);
    expect(await priceChanges(after.membership_id)).toHaveLength(0);
  });

  it('when the job first runs after this version is deployed, then members of a plan whose price changed before stay on their price: nobody is repriced', async () => {
    const plan = await recurringPlan(3_000);
    const other = await recurringPlan(2_500);
    // Three members left on the plan's old Price by the code before: a purchase paid while a price
    // change was scheduled, a plan change into the plan applied then, and one skipped then.
    const bought = await paidPurchase(plan.id);
    const mover = await member(other);
    expect((await planChange(mover.id, { to_plan_id: plan.id, when: 'period_end' })).status).toBe(201);
    const { invoice } = fake.billing.cycle(mover.stripeSubscriptionId!, { outcome: 'paid' });
    await deliverStripeEvent(t, signedBillingEvent('invoice.paid', invoice!, { secret: TEST_WEBHOOK_SECRET }));
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: mover.id } })).planId).toBe(plan.id);
    const skipped = await member(plan);
    // The plan's price changed before the migration: it keeps no scheduling time.
    const newPrice = await stripe().prices.create({
      product: plan.stripeProductId,
      unit_amount: 3_500,
      currency: 'eur',
      recurring: { interval: 'month' },
    });
    await t.deps.db.membershipPlan.update({
      where: { id: plan.id },
      data: { priceCents: 3_500, stripePriceId: newPrice.id },
    });
    const subscriptions = [bought.subscription_id, mover.stripeSubscriptionId!, skipped.stripeSubscriptionId!];
    const updatesBefore = subscriptions.map((id) => fake.requestsTo('POST', `/v1/subscriptions/${id}`).length);

    await applyPriceChanges(t.deps);
    await applyPriceChanges(t.deps, new Date(Date.now() + 40 * DAY));

    for (const id of [bought.membership_id, mover.id, skipped.id]) {
      expect(await priceChanges(id)).toHaveLength(0);
      expect(await eventsOf(id, 'membership.price_change_scheduled')).toHaveLength(0);
      expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id } })).priceCents).toBe(3_000);
    }
    expect(subscriptions.map((id) => fake.requestsTo('POST', `/v1/subscriptions/${id}`).length)).toEqual(updatesBefore);
    expect(subscriptions.map(itemPrice)).toEqual(subscriptions.map(() => plan.stripePriceId));
  });

  it('when a member skipped at scheduling has its other change end after the new price applied, then it keeps its price for good', async () => {
    const plan = await recurringPlan(3_000);
    const plus = await recurringPlan(4_000);
    const busy = await member(plan);
    expect((await planChange(busy.id, { to_plan_id: plus.id, when: 'period_end' })).status).toBe(201);
    const effectiveOn = tomorrow();
    const res = await priceChange(plan.id, { price_cents: 3_500, effective_on: effectiveOn });
    expect(res.body.skipped).toEqual([{ membership_id: busy.id, reason: 'change_pending' }]);
    const dayAfter = new Date(Date.parse(`${effectiveOn}T00:00:00Z`) + 1000);
    await applyPriceChanges(t.deps, dayAfter);
    expect((await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id } })).stripePriceId).toBe(
      res.body.stripe_price_id,
    );

    const withdrawn = await request(t.app)
      .delete(`/api/v1/memberships/${busy.id}/plan-change`)
      .set(auth(demo.api_keys.manager));
    expect(withdrawn.status).toBe(200);
    await applyPriceChanges(t.deps, dayAfter);
    await applyPriceChanges(t.deps, new Date(dayAfter.getTime() + 40 * DAY));
    expect(await priceChanges(busy.id)).toHaveLength(0);
    expect(await eventsOf(busy.id, 'membership.price_change_scheduled')).toHaveLength(0);
    expect(itemPrice(busy.stripeSubscriptionId!)).toBe(plan.stripePriceId);
  });

  it('when the job reaches members before the admin’s own request does (running alongside it, or after it stopped), then their price_change_scheduled names that admin too', async () => {
    const plan = await recurringPlan(3_000);
    const members = [];
    for (let i = 0; i < 6; i += 1) members.push(await member(plan));
    const body = { price_cents: 3_200, effective_on: tomorrow() };
    const [res] = await Promise.all([priceChange(plan.id, body), applyPriceChanges(t.deps), applyPriceChanges(t.deps)]);
    expect(res.status).toBe(201);
    // As if the request had stopped before the last member: the job alone gives it its change.
    const last = members[members.length - 1]!;
    await t.deps.db.membershipChange.deleteMany({ where: { membershipId: last.id } });
    await t.deps.db.event.deleteMany({ where: { entityId: last.id, name: 'membership.price_change_scheduled' } });
    await applyPriceChanges(t.deps);

    const admin = await keyIdOf(t, demo.api_keys.admin);
    for (const m of members) {
      const [change, ...more] = await priceChanges(m.id);
      expect([change!.actorKeyId, more]).toEqual([admin, []]);
      const events = await eventsOf(m.id, 'membership.price_change_scheduled');
      expect(events.map((e) => (e.data as { actor_user_id: string | null }).actor_user_id)).toEqual([admin]);
    }
  });

  it('when giving one membership its change fails, then the job logs it and carries on with the others, the plan’s new price and the subscription moves; the next run gives it', async () => {
    const plan = await recurringPlan(3_000);
    const effectiveOn = tomorrow();
    const res = await priceChange(plan.id, { price_cents: 3_600, effective_on: effectiveOn });
    expect([res.status, res.body.scheduled]).toEqual([201, []]);
    const newPrice: string = res.body.stripe_price_id;
    // Both buy while the price is scheduled.
    const [failing, fine] = [await paidPurchase(plan.id), await paidPurchase(plan.id)];
    const follow = followPlanPriceModule.followPlanPrice;
    let failures = 0;
    const spy = jest.spyOn(followPlanPriceModule, 'followPlanPrice').mockImplementation(async (tx, membership, now) => {
      if (membership.id === failing.membership_id && failures === 0) {
        failures += 1;
        throw new Error('connection reset');
      }
      return follow(tx, membership, now);
    });
    const warn = jest.spyOn(t.deps.logger, 'warn');
    try {
      const dayAfter = new Date(Date.parse(`${effectiveOn}T00:00:00Z`) + 1000);
      await expect(applyPriceChanges(t.deps, dayAfter)).resolves.toBeGreaterThan(0);
      expect(failures).toBe(1);
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ membershipId: failing.membership_id }),
        expect.stringContaining('new price'),
      );
      expect((await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id } })).stripePriceId).toBe(
        newPrice,
      );
      expect(await priceChanges(failing.membership_id)).toHaveLength(0);
      const [change] = await priceChanges(fine.membership_id);
      expect(change!.providerAppliedAt).not.toBeNull();
      expect(itemPrice(fine.subscription_id)).toBe(newPrice);

      // Next run, the price has applied, and it still follows: it bought once the change was scheduled.
      await applyPriceChanges(t.deps, dayAfter);
      const [later, ...more] = await priceChanges(failing.membership_id);
      expect([later!.toPriceId, more]).toEqual([newPrice, []]);
      expect(await eventsOf(failing.membership_id, 'membership.price_change_scheduled')).toHaveLength(1);
      expect(itemPrice(failing.subscription_id)).toBe(newPrice);
    } finally {
      spy.mockRestore();
      warn.mockRestore();
    }
  });

  it('when a scheduling failed part way, then the same request again (even at once, or while the job runs) schedules the rest and lists those done as scheduled; another price or day is 409 change_pending', async () => {
    const plan = await recurringPlan(3_000);
    const [a, b] = [await member(plan), await member(plan)];
    const effectiveOn = tomorrow();
    const body = { price_cents: 3_300, effective_on: effectiveOn };
    // Sent twice at once: both carry on with the one change, and each member gets it once.
    const [first, twin] = await Promise.all([priceChange(plan.id, body), priceChange(plan.id, body)]);
    expect([first.status, twin.status]).toEqual([201, 201]);
    expect(twin.body.stripe_price_id).toBe(first.body.stripe_price_id);
    const byMember = (scheduled: { membership_id: string; change_id: string }[]) =>
      [...scheduled].sort((x, y) => x.membership_id.localeCompare(y.membership_id));
    expect(byMember(twin.body.scheduled)).toEqual(byMember(first.body.scheduled));
    const changeOf = (id: string) =>
      first.body.scheduled.find((s: { membership_id: string }) => s.membership_id === id).change_id as string;
    // As if the request had stopped after `a`: b was never reached, and c is there too.
    await t.deps.db.membershipChange.delete({ where: { id: changeOf(b.id) } });
    await t.deps.db.event.deleteMany({ where: { entityId: b.id, name: 'membership.price_change_scheduled' } });
    const c = await member(plan);

    // Again, while the job runs: whichever reaches a member first schedules it.
    const [retry] = await Promise.all([priceChange(plan.id, body), applyPriceChanges(t.deps)]);
    expect(retry.status).toBe(201);
    expect(retry.body.stripe_price_id).toBe(first.body.stripe_price_id);
    expect(retry.body.skipped).toEqual([]);
    const scheduled = new Map(
      retry.body.scheduled.map((s: { membership_id: string; change_id: string }) => [s.membership_id, s.change_id]),
    );
    expect([...scheduled.keys()].sort()).toEqual([a.id, b.id, c.id].sort());
    expect(scheduled.get(a.id)).toBe(changeOf(a.id));
    for (const m of [a, b, c]) {
      const [change, ...more] = await priceChanges(m.id);
      expect([change!.id, more]).toEqual([scheduled.get(m.id), []]);
      expect(await eventsOf(m.id, 'membership.price_change_scheduled')).toHaveLength(1);
    }

    for (const other of [
      { price_cents: 3_400, effective_on: effectiveOn },
      { price_cents: 3_300, effective_on: new Date(Date.now() + 2 * DAY).toISOString().slice(0, 10) },
    ]) {
      const refused = await priceChange(plan.id, other);
      expect([refused.status, refused.body.error]).toEqual([409, 'change_pending']);
    }
  });

  it('when a price change is refused, then each refusal has its code', async () => {
    const plan = await recurringPlan(3_000);
    const fixed = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const foreign = await recurringPlan(3_000, { tenantId: other.tenant.id });
    const today = new Date().toISOString().slice(0, 10);
    const cases: [string, object, string, number, string][] = [
      [plan.id, { price_cents: 3_500, effective_on: today }, demo.api_keys.admin, 400, 'invalid_body'],
      [plan.id, { price_cents: 3_500, effective_on: '2027-02-30' }, demo.api_keys.admin, 400, 'invalid_body'],
      [plan.id, { price_cents: 0, effective_on: tomorrow() }, demo.api_keys.admin, 400, 'invalid_body'],
      [plan.id, { price_cents: 3_000, effective_on: tomorrow() }, demo.api_keys.admin, 400, 'plan_invalid'],
      [fixed.id, { price_cents: 3_500, effective_on: tomorrow() }, demo.api_keys.admin, 400, 'plan_invalid'],
      [
        foreign.id,
        { price_cents: 3_500, effective_on: tomorrow() },
        demo.api_keys.admin,
        404,
        'membership_plan_not_found',
      ],
      [
        'not-a-uuid',
        { price_cents: 3_500, effective_on: tomorrow() },
        demo.api_keys.admin,
        404,
        'membership_plan_not_found',
      ],
      [plan.id, { price_cents: 3_500, effective_on: tomorrow() }, demo.api_keys.manager, 403, 'forbidden'],
    ];
    for (const [id, body, key, status, code] of cases) {
      const res = await priceChange(id, body, key);
      expect({ id, body, status: res.status, code: res.body.error }).toEqual({ id, body, status, code });
    }
    expect(await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: plan.id } })).toMatchObject({
      nextPriceCents: null,
    });
  });
});
