import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  clientIp,
  createTestApp,
  type FakeStripe,
  seedMembership,
  seedTenant,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
  unreachableStripeUrl,
} from '@booking/test-kit';

// Membership plans on the real PostgreSQL and Redis with the fake Stripe: admins create and
// change them (recurring plans on a Stripe Product and Price, completed by a retry when Stripe
// fails), staff read them, and the anonymous widget lists the active ones.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
});
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

const fixedTerm = (extra: Record<string, unknown> = {}) => ({
  name: `Annual pass ${randomUUID().slice(0, 6)}`,
  billing: 'fixed_term',
  price_cents: 12_000,
  currency: 'USD',
  term_months: 12,
  visits_per_period: 8,
  benefits: [
    { name: 'Coffee', quantity_per_period: 2 },
    { name: 'Locker', quantity_per_period: null },
  ],
  ...extra,
});
const recurring = (extra: Record<string, unknown> = {}) => ({
  name: `Monthly ${randomUUID().slice(0, 6)}`,
  billing: 'recurring',
  price_cents: 4_900,
  currency: 'USD',
  interval: 'month',
  interval_count: 1,
  freeze_allowed: true,
  freeze_fee_cents: 500,
  ...extra,
});

const create = (body: object, key = demo.api_keys.admin, app = t.app) =>
  request(app).post('/api/v1/membership-plans').set('Authorization', bearer(key)).send(body);

describe('creating and reading plans', () => {
  it('when an admin creates a fixed-term plan, then it is stored with its benefits, Stripe is not asked, and staff read it alone and in the list', async () => {
    const before = fake.requests.length;
    const res = await create(fixedTerm({ description: 'All year' }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      billing: 'fixed_term',
      price_cents: 12_000,
      term_months: 12,
      term_days: null,
      interval: null,
      active: true,
      visits_per_period: 8,
      stripe_product_id: null,
      stripe_price_id: null,
      description: 'All year',
    });
    expect(res.body.benefits.map((b: { name: string }) => b.name)).toEqual(['Coffee', 'Locker']);
    expect(fake.requests.length).toBe(before);

    const one = await request(t.app)
      .get(`/api/v1/membership-plans/${res.body.plan_id}`)
      .set('Authorization', bearer(demo.api_keys.staff));
    expect(one.status).toBe(200);
    expect(one.body).toEqual(res.body);

    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 50; page += 1) {
      const query: Record<string, string> = after ? { limit: '1', starting_after: after } : { limit: '1' };
      const list = await request(t.app)
        .get('/api/v1/membership-plans')
        .query(query)
        .set('Authorization', bearer(demo.api_keys.staff));
      expect(list.status).toBe(200);
      seen.push(...list.body.data.map((p: { plan_id: string }) => p.plan_id));
      after = list.body.next_starting_after;
      if (!after) break;
    }
    expect(seen).toContain(res.body.plan_id);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('when an admin creates a recurring plan, then a Stripe Product and a recurring Price are made with keys derived from the plan id and stored', async () => {
    const res = await create(recurring({ interval: 'year', interval_count: 1, price_cents: 49_000 }));
    expect(res.status).toBe(201);
    const planId = res.body.plan_id as string;
    expect(res.body.stripe_product_id).toMatch(/^prod_/);
    expect(res.body.stripe_price_id).toMatch(/^price_/);
    const [product] = fake
      .requestsTo('POST', '/v1/products')
      .filter((r) => r.idempotencyKey === `plan-${planId}-product`);
    expect(product!.body.metadata).toEqual({ tenant_id: demo.tenant.id, plan_id: planId });
    const [price] = fake.requestsTo('POST', '/v1/prices').filter((r) => r.idempotencyKey === `plan-${planId}-price`);
    expect(price!.body).toMatchObject({
      product: res.body.stripe_product_id,
      unit_amount: '49000',
      currency: 'usd',
      recurring: { interval: 'year', interval_count: '1' },
    });
    const stored = fake.billing.prices.get(res.body.stripe_price_id)!;
    expect(stored.recurring).toMatchObject({ interval: 'year', interval_count: 1 });
  });

  it('when Stripe is unreachable, then the create answers 503 and the same request retried with its Idempotency-Key completes that one plan', async () => {
    const broken = createTestApp(stripeEnv(await unreachableStripeUrl()));
    try {
      const body = recurring();
      const ip = clientIp();
      const first = await request(broken.app)
        .post('/api/v1/membership-plans')
        .set('Authorization', bearer(demo.api_keys.admin))
        .set('X-Forwarded-For', ip)
        .set('Idempotency-Key', 'plan-retry-1')
        .send(body);
      expect(first.status).toBe(503);
      const kept = await t.deps.db.membershipPlan.findMany({ where: { tenantId: demo.tenant.id, name: body.name } });
      expect(kept).toHaveLength(1);
      expect(kept[0]!.stripePriceId).toBeNull();

      const retry = await request(t.app)
        .post('/api/v1/membership-plans')
        .set('Authorization', bearer(demo.api_keys.admin))
        .set('X-Forwarded-For', ip)
        .set('Idempotency-Key', 'plan-retry-1')
        .send(body);
      expect(retry.status).toBe(201);
      expect(retry.body.plan_id).toBe(kept[0]!.id);
      expect(retry.body.stripe_price_id).toMatch(/^price_/);
      expect(await t.deps.db.membershipPlan.count({ where: { tenantId: demo.tenant.id, name: body.name } })).toBe(1);
    } finally {
      await broken.close();
    }
  });

  it('when the fields do not fit together, then 400 plan_invalid; a staff key cannot create; an unknown field is invalid_body', async () => {
    const cases: object[] = [
      fixedTerm({ term_days: 30 }),
      fixedTerm({ term_months: undefined }),
      fixedTerm({ interval: 'month' }),
      fixedTerm({ freeze_fee_cents: 100 }),
      fixedTerm({ interval_count: 2 }),
      fixedTerm({ freeze_min_days: 10, freeze_max_days: 5 }),
      fixedTerm({
        benefits: [
          { name: 'Towel', quantity_per_period: 1 },
          { name: 'Towel', quantity_per_period: 2 },
        ],
      }),
      recurring({ interval: undefined }),
      recurring({ term_days: 30 }),
    ];
    for (const body of cases) {
      const res = await create(body);
      expect([res.status, res.body.error, JSON.stringify(body)]).toEqual([400, 'plan_invalid', JSON.stringify(body)]);
    }
    expect((await create(fixedTerm({ price_cents: 0 }))).body.error).toBe('invalid_body');
    expect((await create(fixedTerm({ colour: 'red' }))).body.error).toBe('invalid_body');
    expect((await create(fixedTerm(), demo.api_keys.staff)).status).toBe(403);
  });
});

describe('changing plans', () => {
  it('when an admin changes a plan, then the editable fields and benefits change (kept by name), and price, billing and interval are refused', async () => {
    const created = (await create(fixedTerm())).body;
    const coffee = created.benefits.find((b: { name: string }) => b.name === 'Coffee');
    const res = await request(t.app)
      .patch(`/api/v1/membership-plans/${created.plan_id}`)
      .set('Authorization', bearer(demo.api_keys.admin))
      .send({
        name: 'Renamed',
        description: null,
        active: false,
        guest_passes_per_period: 3,
        member_discount_percent: 15,
        freeze_allowed: true,
        freeze_min_days: 3,
        freeze_max_days: 30,
        transferable: true,
        requires_photo: true,
        benefits: [
          { name: 'Coffee', quantity_per_period: 5 },
          { name: 'Sauna', quantity_per_period: 1 },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      active: false,
      guest_passes_per_period: 3,
      member_discount_percent: 15,
      freeze_min_days: 3,
      transferable: true,
      requires_photo: true,
      price_cents: 12_000,
    });
    expect(res.body.benefits).toEqual([
      { benefit_id: coffee.benefit_id, name: 'Coffee', quantity_per_period: 5 },
      expect.objectContaining({ name: 'Sauna', quantity_per_period: 1 }),
    ]);

    for (const field of [{ price_cents: 100 }, { billing: 'recurring' }, { interval: 'year' }, {}]) {
      const refused = await request(t.app)
        .patch(`/api/v1/membership-plans/${created.plan_id}`)
        .set('Authorization', bearer(demo.api_keys.admin))
        .send(field);
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_body']);
    }
    const badRules = await request(t.app)
      .patch(`/api/v1/membership-plans/${created.plan_id}`)
      .set('Authorization', bearer(demo.api_keys.admin))
      .send({ freeze_max_days: 2 });
    expect([badRules.status, badRules.body.error]).toEqual([400, 'plan_invalid']);
  });

  it('when a benefit that was used would be removed, then 400 plan_invalid and nothing changes', async () => {
    const created = (await create(fixedTerm())).body;
    const coffee = created.benefits.find((b: { name: string }) => b.name === 'Coffee');
    const membership = await seedMembership(
      t.deps.db,
      await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: created.plan_id } }),
    );
    await t.deps.db.membershipUsage.create({
      data: {
        membershipId: membership.id,
        kind: 'benefit',
        status: 'consumed',
        quantity: 1,
        periodKey: '2026-11',
        benefitId: coffee.benefit_id,
      },
    });
    const res = await request(t.app)
      .patch(`/api/v1/membership-plans/${created.plan_id}`)
      .set('Authorization', bearer(demo.api_keys.admin))
      .send({ name: 'Should not stick', benefits: [{ name: 'Locker', quantity_per_period: null }] });
    expect([res.status, res.body.error]).toEqual([400, 'plan_invalid']);
    const plan = await t.deps.db.membershipPlan.findUniqueOrThrow({
      where: { id: created.plan_id },
      include: { benefits: true },
    });
    expect(plan.name).toBe(created.name);
    expect(plan.benefits).toHaveLength(2);
  });

  it('when allowance_period would change under live memberships, then 400 plan_invalid; with none live, it changes', async () => {
    const created = (await create(fixedTerm())).body;
    const patch = (body: object) =>
      request(t.app)
        .patch(`/api/v1/membership-plans/${created.plan_id}`)
        .set('Authorization', bearer(demo.api_keys.admin))
        .send(body);
    const next = created.allowance_period === 'month' ? 'term' : 'month';
    const membership = await seedMembership(
      t.deps.db,
      await t.deps.db.membershipPlan.findUniqueOrThrow({ where: { id: created.plan_id } }),
    );

    const refused = await patch({ allowance_period: next });
    expect([refused.status, refused.body.error]).toEqual([400, 'plan_invalid']);
    await t.deps.db.membership.update({ where: { id: membership.id }, data: { status: 'expired' } });
    const changed = await patch({ allowance_period: next });
    expect([changed.status, changed.body.allowance_period]).toEqual([200, next]);
  });

  it("when another tenant's key names the plan, then 404 membership_plan_not_found for read and change", async () => {
    const created = (await create(fixedTerm())).body;
    const read = await request(t.app)
      .get(`/api/v1/membership-plans/${created.plan_id}`)
      .set('Authorization', bearer(other.api_keys.admin));
    expect([read.status, read.body.error]).toEqual([404, 'membership_plan_not_found']);
    const change = await request(t.app)
      .patch(`/api/v1/membership-plans/${created.plan_id}`)
      .set('Authorization', bearer(other.api_keys.admin))
      .send({ name: 'Mallory' });
    expect([change.status, change.body.error]).toEqual([404, 'membership_plan_not_found']);
    const list = await request(t.app)
      .get('/api/v1/membership-plans')
      .set('Authorization', bearer(other.api_keys.staff));
    expect(list.body.data.map((p: { plan_id: string }) => p.plan_id)).not.toContain(created.plan_id);
    const notUuid = await request(t.app)
      .get('/api/v1/membership-plans/not-a-uuid')
      .set('Authorization', bearer(demo.api_keys.staff));
    expect(notUuid.status).toBe(404);
  });
});

describe('the widget', () => {
  it('when the widget asks for a published tenant, then it lists the active plans with benefits and no Stripe ids; an unknown tenant is 404', async () => {
    const active = (await create(recurring(), other.api_keys.admin)).body;
    const inactive = (await create(fixedTerm({ active: false }), other.api_keys.admin)).body;
    const res = await request(t.app).get('/api/widget/membership-plans').query({ tenant: other.tenant.slug });
    expect(res.status).toBe(200);
    const ids = res.body.plans.map((p: { plan_id: string }) => p.plan_id);
    expect(ids).toContain(active.plan_id);
    expect(ids).not.toContain(inactive.plan_id);
    expect(JSON.stringify(res.body)).not.toContain('stripe');
    const unknown = await request(t.app)
      .get('/api/widget/membership-plans')
      .query({ tenant: `nope-${randomUUID()}` });
    expect([unknown.status, unknown.body.error]).toEqual([404, 'tenant_not_found']);
    const missing = await request(t.app).get('/api/widget/membership-plans');
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_query']);
  });
});
