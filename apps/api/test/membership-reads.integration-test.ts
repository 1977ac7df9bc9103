import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { createTestApp, seedMembership, seedMembershipPlan, seedTenant, type TestApp } from '@booking/test-kit';

// Operator reads of memberships on the real PostgreSQL: the list (filters, pages), one
// membership with its uses, freezes, changes and invoices, and tenant isolation.

let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

beforeAll(async () => {
  t = createTestApp();
  demo = await seedTenant(t.deps);
  other = await seedTenant(t.deps);
});
afterAll(() => t.close());

describe('reading memberships', () => {
  it('when staff read a membership, then it comes with its uses, freezes, changes and invoices as stored', async () => {
    const db = t.deps.db;
    const plan = await seedMembershipPlan(db, demo.tenant.id, { billing: 'recurring' });
    const other = await seedMembershipPlan(db, demo.tenant.id, { billing: 'recurring', priceCents: 12_900 });
    const m = await seedMembership(db, plan);
    await db.membershipUsage.create({
      data: {
        membershipId: m.id,
        kind: 'benefit',
        status: 'consumed',
        quantity: 1,
        periodKey: '2026-11',
        benefitId: plan.benefits[0]!.id,
      },
    });
    await db.membershipFreeze.create({
      data: {
        membershipId: m.id,
        startsOn: new Date('2027-01-10'),
        endsOn: new Date('2027-01-20'),
        status: 'booked',
        requestedBy: 'member',
      },
    });
    await db.membershipChange.create({
      data: {
        membershipId: m.id,
        kind: 'plan_change',
        status: 'pending',
        timing: 'period_end',
        fromPlanId: plan.id,
        toPlanId: other.id,
        fromPriceCents: 9_900,
        toPriceCents: 12_900,
        effectiveAt: m.expiresAt!,
        requestedBy: 'staff',
      },
    });
    await db.membershipInvoice.create({
      data: {
        stripeInvoiceId: `in_${m.id.slice(0, 8)}`,
        membershipId: m.id,
        billingReason: 'subscription_create',
        status: 'paid',
        attemptCount: 1,
        amountDueCents: 9_900,
        amountPaidCents: 9_900,
        currency: 'EUR',
      },
    });

    const res = await request(t.app).get(`/api/v1/memberships/${m.id}`).set(auth(demo.api_keys.staff));

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      membership_id: m.id,
      plan_id: plan.id,
      billing: 'recurring',
      status: 'active',
      subscription_id: m.stripeSubscriptionId,
      customer_id: m.customerId,
      holder_customer_id: m.customerId,
    });
    expect(res.body.usages).toEqual([
      expect.objectContaining({ kind: 'benefit', status: 'consumed', quantity: 1, period_key: '2026-11' }),
    ]);
    expect(res.body.freezes).toEqual([
      expect.objectContaining({
        starts_on: '2027-01-10',
        ends_on: '2027-01-20',
        status: 'booked',
        requested_by: 'member',
      }),
    ]);
    expect(res.body.changes).toEqual([
      expect.objectContaining({
        kind: 'plan_change',
        status: 'pending',
        when: 'period_end',
        to_plan_id: other.id,
        to_price_cents: 12_900,
      }),
    ]);
    expect(res.body.invoices).toEqual([
      expect.objectContaining({ status: 'paid', amount_paid_cents: 9_900, currency: 'EUR' }),
    ]);
  });

  it('when staff list memberships by plan, status and customer, then pages follow creation order and each filter narrows the list', async () => {
    const db = t.deps.db;
    const plan = await seedMembershipPlan(db, demo.tenant.id);
    const made = [];
    for (const status of ['active', 'expired', 'active'] as const)
      made.push(await seedMembership(db, plan, { status }));

    const first = await request(t.app)
      .get(`/api/v1/memberships?plan_id=${plan.id}&limit=2`)
      .set(auth(demo.api_keys.staff));
    const second = await request(t.app)
      .get(`/api/v1/memberships?plan_id=${plan.id}&limit=2&starting_after=${first.body.next_starting_after}`)
      .set(auth(demo.api_keys.staff));
    const expired = await request(t.app)
      .get(`/api/v1/memberships?plan_id=${plan.id}&status=expired`)
      .set(auth(demo.api_keys.staff));
    const ofCustomer = await request(t.app)
      .get(`/api/v1/memberships?customer_id=${made[2]!.customerId}`)
      .set(auth(demo.api_keys.staff));

    expect(first.status).toBe(200);
    expect([...first.body.data, ...second.body.data].map((m: { membership_id: string }) => m.membership_id)).toEqual(
      made.map((m) => m.id),
    );
    expect(second.body.next_starting_after).toBeNull();
    expect(expired.body.data.map((m: { membership_id: string }) => m.membership_id)).toEqual([made[1]!.id]);
    expect(ofCustomer.body.data.map((m: { membership_id: string }) => m.membership_id)).toEqual([made[2]!.id]);
  });

  it("when another tenant's key reads a membership, or a query is bad, then 404 membership_not_found or 400 invalid_query", async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const m = await seedMembership(t.deps.db, plan);

    const foreign = await request(t.app).get(`/api/v1/memberships/${m.id}`).set(auth(other.api_keys.admin));
    const notUuid = await request(t.app).get('/api/v1/memberships/not-a-uuid').set(auth(demo.api_keys.staff));
    const badStatus = await request(t.app).get('/api/v1/memberships?status=lapsed').set(auth(demo.api_keys.staff));
    const unknown = await request(t.app).get('/api/v1/memberships?colour=red').set(auth(demo.api_keys.staff));
    const foreignList = await request(t.app)
      .get(`/api/v1/memberships?plan_id=${plan.id}`)
      .set(auth(other.api_keys.staff));
    const noKey = await request(t.app).get('/api/v1/memberships');

    expect([foreign.status, foreign.body.error]).toEqual([404, 'membership_not_found']);
    expect([notUuid.status, notUuid.body.error]).toEqual([404, 'membership_not_found']);
    expect([badStatus.status, badStatus.body.error]).toEqual([400, 'invalid_query']);
    expect([unknown.status, unknown.body.error]).toEqual([400, 'invalid_query']);
    expect(foreignList.body.data).toEqual([]);
    expect([noKey.status, noKey.body.error]).toEqual([401, 'unauthorized']);
  });
});
