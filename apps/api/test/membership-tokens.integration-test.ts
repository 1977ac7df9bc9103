import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { createTestApp, seedMembership, seedMembershipPlan, seedTenant, type TestApp } from '@booking/test-kit';

// The tokens of a membership across a holder change: staff hand out the member token and the
// self-service token; a holder change retires both, and staff hand out new ones.

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

const tokensOf = async (membershipId: string) => {
  const res = await request(t.app)
    .post(`/api/v1/memberships/${membershipId}/tokens`)
    .set(auth(demo.api_keys.staff))
    .set('Idempotency-Key', randomUUID());
  expect(res.status).toBe(201);
  return res.body as { member_token: string; manage_token: string };
};

/** A freeze asked for with the member's self-service token: what it answers shows whether the token manages the membership. */
const bookFreeze = (membershipId: string, token: string) =>
  request(t.app)
    .post(`/api/v1/memberships/${membershipId}/freezes`)
    .set('X-Membership-Token', token)
    .send({ starts_on: '2099-01-01', ends_on: '2099-01-10' });

describe('membership tokens across a holder change', () => {
  it('when the holder changes, then the self-service token handed out before is 401 invalid_token, and a new one manages the membership', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { transferable: true });
    const membership = await seedMembership(t.deps.db, plan);
    const before = await tokensOf(membership.id);
    // Genuine before the change: refused by the freeze rules (a date past the term), not by the token.
    expect((await bookFreeze(membership.id, before.manage_token)).status).toBe(422);

    const change = await request(t.app)
      .post(`/api/v1/memberships/${membership.id}/holder`)
      .set(auth(demo.api_keys.manager))
      .send({ customer: { email: `holder-${randomUUID()}@example.com`, first_name: 'Ada' } });
    expect(change.status).toBe(200);

    const stale = await bookFreeze(membership.id, before.manage_token);
    expect([stale.status, stale.body.error]).toEqual([401, 'invalid_token']);
    const after = await tokensOf(membership.id);
    expect((await bookFreeze(membership.id, after.manage_token)).status).toBe(422);
  });

  it("when a self-service token is used for another membership, or another tenant's, then 401 invalid_token", async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id);
    const mine = await seedMembership(t.deps.db, plan);
    const theirs = await seedMembership(t.deps.db, plan);
    const { manage_token } = await tokensOf(mine.id);

    const elsewhere = await bookFreeze(theirs.id, manage_token);
    const foreignPlan = await seedMembershipPlan(t.deps.db, other.tenant.id);
    const foreign = await seedMembership(t.deps.db, foreignPlan);
    const otherTenant = await bookFreeze(foreign.id, manage_token);

    expect([elsewhere.status, elsewhere.body.error]).toEqual([401, 'invalid_token']);
    expect([otherTenant.status, otherTenant.body.error]).toEqual([401, 'invalid_token']);
  });
});
