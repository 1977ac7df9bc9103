import type { DemoTenant } from '@booking/db';
import { createTestApp, seedMembership, seedMembershipPlan, seedTenant, type TestApp } from '@booking/test-kit';
import { expireMemberships } from '../src/membership-freezes/expire-memberships';

// The fixed-term expiry job on the real PostgreSQL: what expires (active fixed-term memberships
// whose term is over) and what does not (a frozen one, a recurring one, one still running), and
// several runs at once on separate connection pools, as several worker pods run it.

let t: TestApp;
/** A second app on its own connection pool, as a second worker pod. */
let t2: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  t = createTestApp();
  t2 = createTestApp();
  demo = await seedTenant(t.deps);
});
afterAll(async () => {
  await t2.close();
  await t.close();
});

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

async function member(options: {
  billing?: 'fixed_term' | 'recurring';
  status?: 'active' | 'frozen';
  expiresAt: Date;
}) {
  const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { billing: options.billing ?? 'fixed_term' });
  return seedMembership(t.deps.db, plan, {
    status: options.status ?? 'active',
    startsAt: new Date(options.expiresAt.getTime() - 30 * 86_400_000),
    expiresAt: options.expiresAt,
  });
}

const expiredEvents = (membershipId: string) =>
  t.deps.db.event.findMany({ where: { entityId: membershipId, name: 'membership.expired' } });

/** What a lifecycle tick does: batches until one expires nothing (bounded). */
async function runUntilDone(app: TestApp, now?: Date): Promise<void> {
  for (let batch = 1; batch <= 50; batch += 1) {
    if ((await expireMemberships({ db: app.deps.db }, now)) === 0) return;
  }
  throw new Error('the expiry job never ran out of work');
}

describe('fixed-term expiry', () => {
  it('when active fixed-term memberships are past their expiry and two job runs go at once, then each expires once with membership.expired', async () => {
    const due = await Promise.all([member({ expiresAt: minutesAgo(5) }), member({ expiresAt: minutesAgo(60) })]);
    await Promise.all([runUntilDone(t), runUntilDone(t2), runUntilDone(t)]);
    for (const membership of due) {
      expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toMatchObject({
        status: 'expired',
      });
      const events = await expiredEvents(membership.id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ tenantId: demo.tenant.id, entityType: 'membership', entityId: membership.id });
      expect(events[0]!.data).toMatchObject({
        membership_id: membership.id,
        plan_id: membership.planId,
        customer_id: membership.customerId,
        holder_customer_id: membership.holderCustomerId,
        expires_at: membership.expiresAt!.toISOString(),
      });
    }
    // Another run finds nothing left.
    await runUntilDone(t);
    for (const membership of due) expect(await expiredEvents(membership.id)).toHaveLength(1);
  });

  it('when a membership is frozen, recurring or still within its term, then it does not expire', async () => {
    const frozen = await member({ status: 'frozen', expiresAt: minutesAgo(5) });
    const recurring = await member({ billing: 'recurring', expiresAt: minutesAgo(5) });
    const running = await member({ expiresAt: new Date(Date.now() + 3_600_000) });
    await runUntilDone(t);
    for (const [membership, status] of [
      [frozen, 'frozen'],
      [recurring, 'active'],
      [running, 'active'],
    ] as const) {
      expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).status).toBe(status);
      expect(await expiredEvents(membership.id)).toEqual([]);
    }
    // The one still within its term expires once its expiry has come.
    await runUntilDone(t, new Date(Date.now() + 3_600_001));
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: running.id } })).status).toBe('expired');
    expect(await expiredEvents(running.id)).toHaveLength(1);
  });

  it('when a membership is locked by another transaction, then the job skips it without waiting and expires it on a later run', async () => {
    const membership = await member({ expiresAt: minutesAgo(1) });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = t2.deps.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM memberships WHERE id = ${membership.id}::uuid FOR UPDATE`;
        locked();
        await held;
      },
      { timeout: 20_000 },
    );
    await isLocked;
    await runUntilDone(t);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).status).toBe('active');
    release();
    await holder;
    await runUntilDone(t);
    expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).status).toBe('expired');
    expect(await expiredEvents(membership.id)).toHaveLength(1);
  });
});
