import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { bearer, createTestApp, keyIdOf, seedMembershipPlan, seedTenant, type TestApp } from '@booking/test-kit';

// Importing existing members on the real PostgreSQL and Redis: one transaction per row, each
// external reference imported once however often (or however concurrently) the file is sent.

let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

beforeAll(async () => {
  t = createTestApp();
  [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
});
afterAll(() => t.close());

const send = (rows: object[], key = demo.api_keys.admin) =>
  request(t.app).post('/api/v1/memberships/imports').set('Authorization', bearer(key)).send({ rows });

const row = (planId: string, extra: Record<string, unknown> = {}) => ({
  external_ref: `OLD-${randomUUID()}`,
  plan_id: planId,
  customer: { email: `imported-${randomUUID()}@example.com`, first_name: 'Grace', last_name: 'Hopper' },
  status: 'active',
  starts_at: '2026-06-01T00:00:00.000Z',
  ...extra,
});

const events = (name: string) => t.deps.db.event.findMany({ where: { tenantId: demo.tenant.id, name } });

describe('membership imports', () => {
  it('when an admin imports rows, then each new reference is a membership with one membership.imported, and the customers are made', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { termDays: null, termMonths: 12 });
    const holder = { email: `holder-${randomUUID()}@example.com`, first_name: 'Kid' };
    const rows = [row(plan.id), row(plan.id, { holder, status: 'expired', expires_at: '2026-07-01T00:00:00.000Z' })];
    const res = await send(rows);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: 2, skipped: 0, failed: 0 });
    const [first, second] = res.body.results;
    expect(first).toMatchObject({ external_ref: rows[0]!.external_ref, outcome: 'created', error: null });

    const imported = await t.deps.db.membership.findUniqueOrThrow({ where: { id: first.membership_id } });
    expect(imported).toMatchObject({ source: 'import', status: 'active', externalRef: rows[0]!.external_ref });
    // Without expires_at: the plan's term from starts_at.
    expect(imported.expiresAt!.toISOString()).toBe('2027-06-01T00:00:00.000Z');
    const withHolder = await t.deps.db.membership.findUniqueOrThrow({
      where: { id: second.membership_id },
      include: { holder: true },
    });
    expect(withHolder).toMatchObject({ status: 'expired' });
    expect(withHolder.holder.email).toBe(holder.email);
    expect(withHolder.holderCustomerId).not.toBe(withHolder.customerId);

    const all = await events('membership.imported');
    const mine = all.filter((e) => [first.membership_id, second.membership_id].includes(e.entityId));
    expect(mine).toHaveLength(2);
    expect(mine.find((e) => e.entityId === first.membership_id)!.data).toMatchObject({
      membership_id: first.membership_id,
      plan_id: plan.id,
      customer_id: imported.customerId,
      holder_customer_id: imported.holderCustomerId,
      external_ref: rows[0]!.external_ref,
      billing: 'fixed_term',
      status: 'active',
      starts_at: '2026-06-01T00:00:00.000Z',
      expires_at: '2027-06-01T00:00:00.000Z',
      actor_user_id: await keyIdOf(t, demo.api_keys.admin),
    });
    const created = await t.deps.db.event.findMany({
      where: { name: 'customer.created', entityId: { in: [imported.customerId, withHolder.holderCustomerId] } },
    });
    expect(created).toHaveLength(2);
  });

  it('when the same file is sent again, and twice at once, then known references are skipped and nothing is recorded twice', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const rows = [row(plan.id), row(plan.id), row(plan.id)];
    const first = await send(rows);
    expect(first.body.created).toBe(3);
    const again = await send(rows);
    expect(again.body).toMatchObject({ created: 0, skipped: 3, failed: 0 });
    expect(again.body.results.map((r: { membership_id: string }) => r.membership_id)).toEqual(
      first.body.results.map((r: { membership_id: string }) => r.membership_id),
    );

    const fresh = Array.from({ length: 5 }, () => row(plan.id));
    const racing = await Promise.all([send(fresh), send(fresh), send(fresh)]);
    expect(racing.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(racing.reduce((sum, r) => sum + r.body.created, 0)).toBe(5);
    expect(racing.reduce((sum, r) => sum + r.body.skipped, 0)).toBe(10);
    const refs = [...rows, ...fresh].map((r) => r.external_ref);
    const memberships = await t.deps.db.membership.findMany({ where: { externalRef: { in: refs } } });
    expect(memberships).toHaveLength(8);
    const imported = (await events('membership.imported')).filter((e) => memberships.some((m) => m.id === e.entityId));
    expect(imported).toHaveLength(8);
  });

  it('when two imports name the same two people the other way round, at once, then both import every row: the people are locked in one order, so neither deadlocks', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const pairs = Array.from({ length: 20 }, (_, i) => [
      { email: `pair-${i}-a-${randomUUID()}@example.com`, first_name: 'Ada' },
      { email: `pair-${i}-b-${randomUUID()}@example.com`, first_name: 'Bo' },
    ]);
    // One file names the first of each pair as owner, the other the second.
    const [forward, backward] = [0, 1].map((first) =>
      pairs.map((pair) => row(plan.id, { customer: pair[first], holder: pair[1 - first] })),
    );
    const answers = await Promise.all([send(forward!), send(backward!)]);
    expect(answers.map((res) => [res.status, res.body.created])).toEqual([
      [200, 20],
      [200, 20],
    ]);
    const emails = pairs.flat().map((person) => person.email);
    expect(await t.deps.db.customer.count({ where: { tenantId: demo.tenant.id, email: { in: emails } } })).toBe(40);
  });

  it('when a row names a recurring plan or bad dates, then that row fails with its code and the others are imported', async () => {
    const fixed = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const recurring = await seedMembershipPlan(t.deps.db, demo.tenant.id, { billing: 'recurring' });
    const rows = [row(recurring.id), row(fixed.id, { expires_at: '2026-05-01T00:00:00.000Z' }), row(fixed.id)];
    const res = await send(rows);
    expect(res.body).toMatchObject({ created: 1, skipped: 0, failed: 2 });
    expect(res.body.results.map((r: { outcome: string; error: string | null }) => [r.outcome, r.error])).toEqual([
      ['failed', 'plan_invalid'],
      ['failed', 'invalid_body'],
      ['created', null],
    ]);
    expect(await t.deps.db.membership.count({ where: { externalRef: rows[0]!.external_ref } })).toBe(0);
  });

  it("when a row names another tenant's plan, then 404 membership_plan_not_found and nothing is imported; bad bodies are 400; staff cannot import", async () => {
    const mine = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const theirs = await seedMembershipPlan(t.deps.db, other.tenant.id);
    const rows = [row(mine.id), row(theirs.id)];
    const res = await send(rows);
    expect([res.status, res.body.error]).toEqual([404, 'membership_plan_not_found']);
    expect(res.body.detail).toEqual({ plan_ids: [theirs.id] });
    expect(await t.deps.db.membership.count({ where: { externalRef: rows[0]!.external_ref } })).toBe(0);

    for (const rowsBody of [[], [row(mine.id, { status: 'frozen' })], [{ ...row(mine.id), external_ref: '' }]]) {
      const bad = await send(rowsBody);
      expect([bad.status, bad.body.error]).toEqual([400, 'invalid_body']);
    }
    // 500 rows at most (a body that large needs BODY_LIMIT_BYTES above its 64 KiB default).
    const roomy = createTestApp({ BODY_LIMIT_BYTES: String(1024 * 1024) });
    try {
      const tooMany = await request(roomy.app)
        .post('/api/v1/memberships/imports')
        .set('Authorization', bearer(demo.api_keys.admin))
        .send({ rows: Array.from({ length: 501 }, () => row(mine.id)) });
      expect([tooMany.status, tooMany.body.error]).toEqual([400, 'invalid_body']);
    } finally {
      await roomy.close();
    }
    expect((await send([row(mine.id)], demo.api_keys.staff)).status).toBe(403);
  });
});
