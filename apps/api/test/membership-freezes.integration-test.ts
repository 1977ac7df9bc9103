import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  createTestApp,
  keyIdOf,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  startFakeStripe,
  stripeEnv,
  type FakeStripe,
  type PlanOptions,
  type TestApp,
  deliverStripeEvent,
  signedBillingEvent,
  TEST_WEBHOOK_SECRET,
  untilDone,
} from '@booking/test-kit';
import { Queue } from 'bullmq';
import { LIFECYCLE_QUEUE } from '../src/jobs/lifecycle-queue';
import { cancelFreeze } from '../src/membership-freezes/cancel-freeze';
import { addDays, dayOf, formatDay } from '../src/membership-freezes/freeze-dates';
import { endFreezes } from '../src/membership-freezes/end-freezes';
import { isFreezeOverlap } from '../src/membership-freezes/freeze-overlap';
import { startFreezes } from '../src/membership-freezes/start-freezes';
import { issueManageToken } from '../src/memberships/member-token';

// Freezes on the real PostgreSQL and Redis and the fake Stripe: booking one within the plan's
// rules (by staff or by the member), the lifecycle jobs that start and end them (a recurring
// membership's subscription paused, its fee billed, and resumed), and cancelling them.

let fake: FakeStripe;
let t: TestApp;
/** A second app on its own connection pool, as a second worker pod. */
let t2: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const today = dayOf(new Date());
const day = (offset: number) => formatDay(addDays(today, offset));

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  t2 = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
  other = await seedTenant(t.deps);
});
afterAll(async () => {
  await t2.close();
  await t.close();
  await fake.stop();
});

const plan = (options: PlanOptions = {}, tenant = demo) =>
  seedMembershipPlan(t.deps.db, tenant.tenant.id, { freezeMinDays: 3, freezeMaxDays: 30, ...options });

async function fixedMember(options: PlanOptions = {}, status: 'active' | 'frozen' | 'expired' = 'active') {
  return seedMembership(t.deps.db, await plan(options), { status });
}

const eventsOf = (membershipId: string, name: string) =>
  t.deps.db.event.findMany({ where: { entityId: membershipId, name }, orderBy: { createdAt: 'asc' } });

const book = (membershipId: string, body: object, headers: Record<string, string> = auth(demo.api_keys.manager)) =>
  request(t.app).post(`/api/v1/memberships/${membershipId}/freezes`).set(headers).send(body);

const cancel = (membershipId: string, freezeId: string, body: object = {}, key = demo.api_keys.manager) =>
  request(t.app).post(`/api/v1/memberships/${membershipId}/freezes/${freezeId}/cancel`).set(auth(key)).send(body);

/** A live subscription in the fake Stripe, its first invoice paid, and a recurring membership on it. */
async function recurringMember(options: PlanOptions = {}) {
  const stripe = t.deps.stripe!;
  const customer = await stripe.customers.create({ email: `sub-${randomUUID()}@example.com` });
  const product = await stripe.products.create({ name: 'Monthly pass' });
  const price = await stripe.prices.create({
    product: product.id,
    unit_amount: 4_900,
    currency: 'eur',
    recurring: { interval: 'month' },
  });
  const subscription = await stripe.subscriptions.create({
    customer: customer.id,
    items: [{ price: price.id }],
    payment_behavior: 'default_incomplete',
    billing_mode: { type: 'flexible' },
  });
  fake.billing.payFirstInvoice(subscription.id);
  const item = fake.billing.subscriptions.get(subscription.id)!.items.data[0]!;
  const recurringPlan = await plan({ billing: 'recurring', stripePriceId: price.id, priceCents: 4_900, ...options });
  const membership = await seedMembership(t.deps.db, recurringPlan, {
    startsAt: new Date(item.current_period_start * 1000),
    expiresAt: new Date(item.current_period_end * 1000),
    stripeSubscriptionId: subscription.id,
    stripeCustomerId: customer.id,
  });
  return { membership, subscriptionId: subscription.id, customerId: customer.id };
}

const jobDeps = (app: TestApp) => ({ db: app.deps.db, stripe: app.deps.stripe });

const MINUTE = 60_000;
/** Within the start job's lead before a recurring renewal: when it pauses the subscription. */
const justBefore = (renewal: Date) => new Date(renewal.getTime() - 10 * MINUTE);

describe('booking a freeze', () => {
  it('when a manager books a freeze within the rules, then it is booked and membership.freeze_booked is recorded once with the days and the actor', async () => {
    const membership = await fixedMember();
    const res = await book(membership.id, { starts_on: day(2), ends_on: day(8), reason: 'travelling' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      starts_on: day(2),
      ends_on: day(8),
      status: 'booked',
      fee_cents: null,
      requested_by: 'staff',
      reason: 'travelling',
      frozen_days: null,
    });
    const events = await eventsOf(membership.id, 'membership.freeze_booked');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      membership_id: membership.id,
      plan_id: membership.planId,
      customer_id: membership.customerId,
      holder_customer_id: membership.holderCustomerId,
      freeze_id: res.body.freeze_id,
      starts_on: day(2),
      ends_on: day(8),
      days: 7,
      fee_cents: null,
      currency: 'EUR',
      requested_by: 'staff',
      actor_user_id: await keyIdOf(t, demo.api_keys.manager),
    });
  });

  it('when a freeze is booked, then the worker is asked to start it on its first day and end it the day after its last', async () => {
    const membership = await fixedMember();
    const res = await book(membership.id, { starts_on: day(3), ends_on: day(9) });
    expect(res.status).toBe(201);
    const queue = new Queue(LIFECYCLE_QUEUE, { connection: t.deps.queueRedis, prefix: t.deps.config.queuePrefix });
    try {
      const dueAt = async (jobId: string) => {
        const job = (await queue.getJob(jobId))!;
        expect(await job.getState()).toBe('delayed');
        const at = new Date(job.timestamp + job.opts.delay!).toISOString();
        await job.remove();
        return at;
      };
      expect(await dueAt(`start-freezes-freeze-${res.body.freeze_id}-start`)).toBe(`${day(3)}T00:00:00.000Z`);
      expect(await dueAt(`end-freezes-freeze-${res.body.freeze_id}-end`)).toBe(`${day(10)}T00:00:00.000Z`);
    } finally {
      await queue.close();
    }
  });

  it("when the member books with the membership's X-Membership-Token, then requested_by is member and no staff actor; a token of another membership is 401", async () => {
    const membership = await fixedMember();
    const token = issueManageToken(t.deps.config, membership);
    const res = await book(membership.id, { starts_on: day(0), ends_on: day(4) }, { 'X-Membership-Token': token });
    expect(res.status).toBe(201);
    expect(res.body.requested_by).toBe('member');
    const [event] = await eventsOf(membership.id, 'membership.freeze_booked');
    expect(event!.data).toMatchObject({ requested_by: 'member', actor_user_id: null, days: 5 });

    const another = await fixedMember();
    const foreign = await book(another.id, { starts_on: day(0), ends_on: day(4) }, { 'X-Membership-Token': token });
    expect(foreign.status).toBe(401);
    expect(foreign.body.error).toBe('invalid_token');
    const staff = await book(another.id, { starts_on: day(0), ends_on: day(4) }, auth(demo.api_keys.staff));
    expect(staff.status).toBe(403);
    expect(await t.deps.db.membershipFreeze.count({ where: { membershipId: another.id } })).toBe(0);
  });

  it("when the plan's rules are broken, then 422 freeze_rules_violated names the rule, and nothing is booked", async () => {
    const cases: { options: PlanOptions; body: object; rule: string }[] = [
      { options: { freezeAllowed: false }, body: { starts_on: day(1), ends_on: day(5) }, rule: 'freeze_allowed' },
      { options: {}, body: { starts_on: day(1), ends_on: day(2) }, rule: 'min_days' },
      { options: {}, body: { starts_on: day(1), ends_on: day(31) }, rule: 'max_days' },
      { options: { freezeNoticeDays: 5 }, body: { starts_on: day(4), ends_on: day(9) }, rule: 'notice' },
      { options: {}, body: { starts_on: day(-1), ends_on: day(5) }, rule: 'notice' },
      { options: { freezesPerYear: 0 }, body: { starts_on: day(1), ends_on: day(5) }, rule: 'freezes_per_year' },
      { options: {}, body: { starts_on: day(400), ends_on: day(405) }, rule: 'within_term' },
    ];
    for (const { options, body, rule } of cases) {
      const membership = await fixedMember(options);
      const res = await book(membership.id, body);
      expect({ rule, status: res.status, body: res.body }).toMatchObject({
        rule,
        status: 422,
        body: { error: 'freeze_rules_violated', detail: { rule } },
      });
      expect(await t.deps.db.membershipFreeze.count({ where: { membershipId: membership.id } })).toBe(0);
    }
  });

  it('when a year already has its freezes, then another starting that year is refused, and one the next year is not', async () => {
    const membership = await seedMembership(t.deps.db, await plan({ freezesPerYear: 1, freezeMaxDays: 90 }), {
      expiresAt: addDays(today, 800),
    });
    const year = today.getUTCFullYear() + 1;
    const first = await book(membership.id, { starts_on: `${year}-01-10`, ends_on: `${year}-01-15` });
    expect(first.status).toBe(201);
    const sameYear = await book(membership.id, { starts_on: `${year}-12-01`, ends_on: `${year}-12-05` });
    expect([sameYear.status, sameYear.body.detail]).toEqual([
      422,
      { rule: 'freezes_per_year', freezes_per_year: 1, year },
    ]);
    const nextYear = await book(membership.id, { starts_on: `${year + 1}-01-10`, ends_on: `${year + 1}-01-15` });
    expect(nextYear.status).toBe(201);
  });

  it('when the membership is not active, a change is pending, the days overlap, the dates are reversed or the membership is not the tenant’s, then the request is refused with its code', async () => {
    const frozen = await fixedMember({}, 'frozen');
    let res = await book(frozen.id, { starts_on: day(1), ends_on: day(5) });
    expect([res.status, res.body.error, res.body.detail]).toEqual([409, 'membership_not_active', { status: 'frozen' }]);

    const changing = await fixedMember();
    const change = await t.deps.db.membershipChange.create({
      data: {
        membershipId: changing.id,
        kind: 'plan_change',
        status: 'pending',
        timing: 'period_end',
        fromPlanId: changing.planId,
        toPlanId: changing.planId,
        fromPriceCents: 9_900,
        toPriceCents: 9_900,
        effectiveAt: addDays(today, 20),
        requestedBy: 'staff',
      },
    });
    res = await book(changing.id, { starts_on: day(1), ends_on: day(5) });
    expect([res.status, res.body.error, res.body.detail]).toEqual([409, 'change_pending', { change_id: change.id }]);

    const membership = await fixedMember();
    const first = await book(membership.id, { starts_on: day(3), ends_on: day(9) });
    res = await book(membership.id, { starts_on: day(9), ends_on: day(12) });
    expect([res.status, res.body.error, res.body.detail]).toEqual([
      409,
      'freeze_overlap',
      { freeze_id: first.body.freeze_id },
    ]);
    res = await book(membership.id, { starts_on: day(12), ends_on: day(10) });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_body']);
    res = await book(membership.id, { starts_on: '2026-02-30', ends_on: day(10) });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_body']);

    const foreign = await seedMembership(t.deps.db, await plan({}, other));
    for (const id of [foreign.id, randomUUID(), 'not-a-uuid']) {
      res = await book(id, { starts_on: day(1), ends_on: day(5) });
      expect([res.status, res.body.error]).toEqual([404, 'membership_not_found']);
    }
    expect(await eventsOf(membership.id, 'membership.freeze_booked')).toHaveLength(1);
  });

  it('when two overlapping freezes are booked at the same time, then one is booked (201) and the other is 409 freeze_overlap, with one event', async () => {
    const membership = await fixedMember();
    const answers = await Promise.all([
      book(membership.id, { starts_on: day(2), ends_on: day(8) }),
      book(membership.id, { starts_on: day(5), ends_on: day(12) }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.status === 409)!.body.error).toBe('freeze_overlap');
    expect(await t.deps.db.membershipFreeze.count({ where: { membershipId: membership.id } })).toBe(1);
    expect(await eventsOf(membership.id, 'membership.freeze_booked')).toHaveLength(1);
  });

  it('when the database refuses an overlapping freeze that got past the check, then it is 409 freeze_overlap too (the exclusion constraint)', async () => {
    const membership = await fixedMember();
    await t.deps.db.membershipFreeze.create({
      data: {
        membershipId: membership.id,
        startsOn: addDays(today, 1),
        endsOn: addDays(today, 4),
        status: 'booked',
        requestedBy: 'staff',
      },
    });
    const refused = await t.deps.db.membershipFreeze
      .create({
        data: {
          membershipId: membership.id,
          startsOn: addDays(today, 3),
          endsOn: addDays(today, 6),
          status: 'booked',
          requestedBy: 'staff',
        },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    // What the use case maps to 409 freeze_overlap.
    expect(refused).toBeDefined();
    expect(isFreezeOverlap(refused)).toBe(true);
    expect(isFreezeOverlap(new Error('something else'))).toBe(false);
  });

  it('when a booking is retried with its Idempotency-Key, then the same freeze comes back and it is booked once', async () => {
    const membership = await fixedMember();
    const headers = { ...auth(demo.api_keys.manager), 'Idempotency-Key': `freeze-${randomUUID()}` };
    const body = { starts_on: day(1), ends_on: day(6) };
    const first = await book(membership.id, body, headers);
    const second = await book(membership.id, body, headers);
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.freeze_id).toBe(first.body.freeze_id);
    expect(await eventsOf(membership.id, 'membership.freeze_booked')).toHaveLength(1);
  });
});

describe('fixed-term freezes through their days', () => {
  it('when the start job runs on the first day (twice at once), then the membership is frozen and membership.frozen is recorded once; when the end job runs after the last day (twice at once), then it is active with its expiry moved out by the days frozen and membership.unfrozen is recorded once', async () => {
    const membership = await fixedMember();
    const booked = await book(membership.id, { starts_on: day(3), ends_on: day(9) });
    const firstDay = addDays(new Date(), 3);

    // Other tests' freezes share the database: what is asserted is this membership's.
    await untilDone(() => startFreezes(jobDeps(t), addDays(new Date(), 2)));
    expect(await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: booked.body.freeze_id } })).toMatchObject({
      status: 'booked',
    });
    await Promise.all([
      untilDone(() => startFreezes(jobDeps(t), firstDay)),
      untilDone(() => startFreezes(jobDeps(t2), firstDay)),
    ]);
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toMatchObject({
      status: 'frozen',
    });
    const freeze = await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: booked.body.freeze_id } });
    expect(freeze.status).toBe('active');
    const frozen = await eventsOf(membership.id, 'membership.frozen');
    expect(frozen).toHaveLength(1);
    expect(frozen[0]!.data).toMatchObject({
      membership_id: membership.id,
      freeze_id: freeze.id,
      starts_on: day(3),
      ends_on: day(9),
      planned_days: 7,
      fee_cents: null,
      currency: 'EUR',
    });

    // Not before the day after its last day.
    await untilDone(() => endFreezes(jobDeps(t), addDays(new Date(), 9)));
    expect(await eventsOf(membership.id, 'membership.unfrozen')).toEqual([]);
    const afterLastDay = addDays(new Date(), 10);
    await Promise.all([
      untilDone(() => endFreezes(jobDeps(t), afterLastDay)),
      untilDone(() => endFreezes(jobDeps(t2), afterLastDay)),
    ]);
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after.status).toBe('active');
    expect(after.expiresAt!.getTime()).toBe(addDays(membership.expiresAt!, 7).getTime());
    expect(await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freeze.id } })).toMatchObject({
      status: 'completed',
      frozenDays: 7,
    });
    const unfrozen = await eventsOf(membership.id, 'membership.unfrozen');
    expect(unfrozen).toHaveLength(1);
    expect(unfrozen[0]!.data).toMatchObject({
      freeze_id: freeze.id,
      frozen_days: 7,
      previous_expires_at: membership.expiresAt!.toISOString(),
      expires_at: after.expiresAt!.toISOString(),
    });
  });

  it('when a booked freeze reaches its first day after the membership stopped being active, then the job cancels it with membership.freeze_cancelled (membership_not_active), once', async () => {
    const membership = await fixedMember();
    const booked = await book(membership.id, { starts_on: day(1), ends_on: day(5) });
    await t.deps.db.membership.update({ where: { id: membership.id }, data: { status: 'expired' } });
    const firstDay = addDays(new Date(), 1);
    await Promise.all([
      untilDone(() => startFreezes(jobDeps(t), firstDay)),
      untilDone(() => startFreezes(jobDeps(t2), firstDay)),
    ]);
    expect(await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: booked.body.freeze_id } })).toMatchObject({
      status: 'cancelled',
      frozenDays: 0,
    });
    const cancelled = await eventsOf(membership.id, 'membership.freeze_cancelled');
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0]!.data).toMatchObject({
      freeze_id: booked.body.freeze_id,
      was: 'booked',
      frozen_days: 0,
      reason: 'membership_not_active',
      actor_user_id: null,
    });
    expect(await eventsOf(membership.id, 'membership.frozen')).toEqual([]);
  });
});

describe('cancelling a freeze', () => {
  it('when a booked freeze is cancelled, then it is cancelled with membership.freeze_cancelled (was booked, no days) once; again is 409 freeze_not_cancellable; an unknown freeze is 404', async () => {
    const membership = await fixedMember();
    const booked = await book(membership.id, { starts_on: day(4), ends_on: day(9) });
    const res = await cancel(membership.id, booked.body.freeze_id, { reason: 'plans changed' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ freeze_id: booked.body.freeze_id, status: 'cancelled', frozen_days: 0 });
    const again = await cancel(membership.id, booked.body.freeze_id);
    expect([again.status, again.body.error, again.body.detail]).toEqual([
      409,
      'freeze_not_cancellable',
      { status: 'cancelled' },
    ]);
    const events = await eventsOf(membership.id, 'membership.freeze_cancelled');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({
      freeze_id: booked.body.freeze_id,
      was: 'booked',
      frozen_days: 0,
      reason: 'plans changed',
      actor_user_id: await keyIdOf(t, demo.api_keys.manager),
    });
    for (const freezeId of [randomUUID(), 'nope']) {
      const missing = await cancel(membership.id, freezeId);
      expect([missing.status, missing.body.error]).toEqual([404, 'freeze_not_found']);
    }
    const foreignMembership = await seedMembership(t.deps.db, await plan({}, other));
    const foreign = await cancel(foreignMembership.id, booked.body.freeze_id);
    expect([foreign.status, foreign.body.error]).toEqual([404, 'membership_not_found']);
    // A cancelled freeze frees its days.
    expect((await book(membership.id, { starts_on: day(4), ends_on: day(9) })).status).toBe(201);
  });

  it('when the member cancels an active freeze on its first day, then the membership is active again with nothing frozen: membership.unfrozen and membership.freeze_cancelled (was active), once each', async () => {
    const membership = await fixedMember();
    const token = issueManageToken(t.deps.config, membership);
    const booked = await book(membership.id, { starts_on: day(0), ends_on: day(6) }, { 'X-Membership-Token': token });
    await untilDone(() => startFreezes(jobDeps(t)));
    const res = await request(t.app)
      .post(`/api/v1/memberships/${membership.id}/freezes/${booked.body.freeze_id}/cancel`)
      .set('X-Membership-Token', token)
      .send({});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'cancelled', frozen_days: 0 });
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after).toMatchObject({ status: 'active', expiresAt: membership.expiresAt });
    expect((await eventsOf(membership.id, 'membership.unfrozen')).map((e) => e.data)).toEqual([
      expect.objectContaining({ frozen_days: 0, expires_at: membership.expiresAt!.toISOString() }),
    ]);
    expect((await eventsOf(membership.id, 'membership.freeze_cancelled')).map((e) => e.data)).toEqual([
      expect.objectContaining({ was: 'active', frozen_days: 0, actor_user_id: null, reason: null }),
    ]);
  });

  it('when an active freeze is ended early on its fourth day, then the days frozen so far (3) move the expiry out, and the end job finds nothing left to do', async () => {
    const membership = await fixedMember();
    const booked = await book(membership.id, { starts_on: day(0), ends_on: day(9) });
    await untilDone(() => startFreezes(jobDeps(t)));
    const actor = {
      tenantId: demo.tenant.id,
      keyId: await keyIdOf(t, demo.api_keys.manager),
      requestedBy: 'staff' as const,
    };
    const fourthDay = addDays(new Date(), 3);
    const ids = { membershipId: membership.id, freezeId: booked.body.freeze_id as string };
    const view = await cancelFreeze(jobDeps(t), actor, ids, { reason: 'back early' }, fourthDay);
    expect(view).toMatchObject({ status: 'cancelled', frozen_days: 3 });
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after.status).toBe('active');
    expect(after.expiresAt!.getTime()).toBe(addDays(membership.expiresAt!, 3).getTime());
    await untilDone(() => endFreezes(jobDeps(t), addDays(new Date(), 11)));
    expect((await eventsOf(membership.id, 'membership.unfrozen')).map((e) => e.data)).toEqual([
      expect.objectContaining({ frozen_days: 3, previous_expires_at: membership.expiresAt!.toISOString() }),
    ]);
    expect((await eventsOf(membership.id, 'membership.freeze_cancelled')).map((e) => e.data)).toEqual([
      expect.objectContaining({ was: 'active', frozen_days: 3, reason: 'back early' }),
    ]);
  });
});

describe('recurring freezes', () => {
  it('when a recurring freeze is booked off its renewal date, then 422 renewal_date; on it, it carries the fee', async () => {
    const { membership } = await recurringMember({ freezeFeeCents: 500 });
    const renewal = formatDay(membership.expiresAt!);
    const off = await book(membership.id, {
      starts_on: formatDay(addDays(membership.expiresAt!, 1)),
      ends_on: formatDay(addDays(membership.expiresAt!, 10)),
    });
    expect([off.status, off.body.error, off.body.detail]).toEqual([
      422,
      'freeze_rules_violated',
      { rule: 'renewal_date', renewal_date: renewal },
    ]);
    const on = await book(membership.id, {
      starts_on: renewal,
      ends_on: formatDay(addDays(membership.expiresAt!, 13)),
    });
    expect(on.status).toBe(201);
    expect(on.body).toMatchObject({ fee_cents: 500, starts_on: renewal });
    expect((await eventsOf(membership.id, 'membership.freeze_booked'))[0]!.data).toMatchObject({
      fee_cents: 500,
      currency: 'EUR',
      days: 14,
    });
  });

  it('when a recurring freeze starts (two job runs at once), then the subscription is paused (one idempotency key), the fee invoiced once with the membership and freeze named, and membership.frozen carries the fee; when it ends, the subscription resumes with a new period and the expiry is its end', async () => {
    const { membership, subscriptionId, customerId } = await recurringMember({ freezeFeeCents: 500 });
    const renewal = membership.expiresAt!;
    const booked = await book(membership.id, {
      starts_on: formatDay(renewal),
      ends_on: formatDay(addDays(renewal, 13)),
    });
    expect(booked.status).toBe(201);

    const beforeRenewal = justBefore(renewal);
    await Promise.all([
      untilDone(() => startFreezes(jobDeps(t), beforeRenewal)),
      untilDone(() => startFreezes(jobDeps(t2), beforeRenewal)),
    ]);
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('paused');
    // However many runs asked, they asked as one: the same idempotency key, from the freeze.
    const pauses = fake.requestsTo('POST', `/v1/subscriptions/${subscriptionId}/pause`);
    expect(pauses.length).toBeGreaterThanOrEqual(1);
    expect(new Set(pauses.map((p) => p.idempotencyKey))).toEqual(new Set([`freeze-pause-${booked.body.freeze_id}`]));
    expect(pauses[0]!.body).toMatchObject({ bill_for: { unused_time_from: { type: 'none' } } });
    const invoices = [...fake.billing.invoices.values()].filter(
      (invoice) => invoice.customer === customerId && invoice.billing_reason === 'manual',
    );
    expect(invoices).toHaveLength(1);
    expect(invoices[0]).toMatchObject({
      amount_due: 500,
      currency: 'eur',
      status: 'open',
      metadata: { membership_id: membership.id, freeze_id: booked.body.freeze_id },
    });
    const freeze = await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: booked.body.freeze_id } });
    expect(freeze).toMatchObject({ status: 'active', stripeFeeInvoiceId: invoices[0]!.id, feeCents: 500 });
    const frozen = await eventsOf(membership.id, 'membership.frozen');
    expect(frozen).toHaveLength(1);
    expect(frozen[0]!.data).toMatchObject({ planned_days: 14, fee_cents: 500, currency: 'EUR', freeze_id: freeze.id });
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toMatchObject({
      status: 'frozen',
    });

    const afterLastDay = addDays(dayOf(renewal), 14);
    await Promise.all([
      untilDone(() => endFreezes(jobDeps(t), afterLastDay)),
      untilDone(() => endFreezes(jobDeps(t2), afterLastDay)),
    ]);
    const subscription = fake.billing.subscriptions.get(subscriptionId)!;
    expect(subscription.status).toBe('active');
    const periodEnd = new Date(subscription.items.data[0]!.current_period_end * 1000);
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after).toMatchObject({ status: 'active', expiresAt: periodEnd });
    const unfrozen = await eventsOf(membership.id, 'membership.unfrozen');
    expect(unfrozen).toHaveLength(1);
    expect(unfrozen[0]!.data).toMatchObject({
      frozen_days: 14,
      previous_expires_at: renewal.toISOString(),
      expires_at: periodEnd.toISOString(),
    });
  });

  it('when staff end an active recurring freeze early, then the subscription resumes and membership.unfrozen and membership.freeze_cancelled (was active) are recorded once each', async () => {
    const { membership, subscriptionId } = await recurringMember();
    const renewal = membership.expiresAt!;
    const booked = await book(membership.id, {
      starts_on: formatDay(renewal),
      ends_on: formatDay(addDays(renewal, 9)),
    });
    await untilDone(() => startFreezes(jobDeps(t), justBefore(renewal)));
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('paused');
    // No fee on this plan: no invoice.
    const freeze = await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: booked.body.freeze_id } });
    expect(freeze.stripeFeeInvoiceId).toBeNull();
    expect((await eventsOf(membership.id, 'membership.frozen'))[0]!.data).toMatchObject({ fee_cents: 0 });

    const res = await cancel(membership.id, freeze.id, { reason: 'back early' });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('cancelled');
    const subscription = fake.billing.subscriptions.get(subscriptionId)!;
    expect(subscription.status).toBe('active');
    const after = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(after).toMatchObject({
      status: 'active',
      expiresAt: new Date(subscription.items.data[0]!.current_period_end * 1000),
    });
    expect(await eventsOf(membership.id, 'membership.unfrozen')).toHaveLength(1);
    expect((await eventsOf(membership.id, 'membership.freeze_cancelled')).map((e) => e.data)).toEqual([
      expect.objectContaining({ was: 'active', reason: 'back early' }),
    ]);
  });
});

describe('when a recurring freeze starts', () => {
  /** A recurring member with a booked freeze from the renewal date (fee 500), and its member token. */
  async function bookedRecurringFreeze(options: PlanOptions = { freezeFeeCents: 500 }) {
    const member = await recurringMember(options);
    const renewal = member.membership.expiresAt!;
    const token = issueManageToken(t.deps.config, member.membership);
    const booked = await book(
      member.membership.id,
      { starts_on: formatDay(renewal), ends_on: formatDay(addDays(renewal, 9)) },
      { 'X-Membership-Token': token },
    );
    expect(booked.status).toBe(201);
    return { ...member, renewal, token, freezeId: booked.body.freeze_id as string };
  }

  const memberCancel = (membershipId: string, freezeId: string, token: string) =>
    request(t.app)
      .post(`/api/v1/memberships/${membershipId}/freezes/${freezeId}/cancel`)
      .set('X-Membership-Token', token)
      .send({});

  /** Runs `run` with the app's Stripe subscriptions.pause doing `before` first (the probe's race). */
  async function withPauseRacing<T>(before: () => Promise<unknown>, run: () => Promise<T>): Promise<T> {
    const subscriptions = t.deps.stripe!.subscriptions;
    const pause = subscriptions.pause;
    subscriptions.pause = (async (...args: Parameters<typeof pause>) => {
      await before();
      return pause.apply(subscriptions, args);
    }) as typeof pause;
    try {
      return await run();
    } finally {
      subscriptions.pause = pause;
    }
  }

  const feeInvoices = (customerId: string) =>
    [...fake.billing.invoices.values()].filter(
      (invoice) => invoice.customer === customerId && invoice.billing_reason === 'manual',
    );

  it('when the member cancels the booked freeze while the job pauses the subscription, then the pause is undone (resumed once) and the fee voided, the membership stays active, and only membership.freeze_cancelled is recorded, once; later runs change nothing', async () => {
    const { membership, subscriptionId, customerId, renewal, token, freezeId } = await bookedRecurringFreeze();
    let cancelStatus = 0;
    const at = justBefore(renewal);
    await withPauseRacing(
      async () => {
        cancelStatus = (await memberCancel(membership.id, freezeId, token)).status;
      },
      () => untilDone(() => startFreezes(jobDeps(t), at)),
    );
    expect(cancelStatus).toBe(200);

    expect(fake.requestsTo('POST', `/v1/subscriptions/${subscriptionId}/pause`)).toHaveLength(1);
    const resumes = fake.requestsTo('POST', `/v1/subscriptions/${subscriptionId}/resume`);
    expect(resumes.map((r) => r.idempotencyKey)).toEqual([`freeze-resume-${freezeId}`]);
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('active');
    const [fee] = feeInvoices(customerId);
    expect(fee).toMatchObject({ amount_due: 500, status: 'void', metadata: { freeze_id: freezeId } });

    const freeze = await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } });
    expect(freeze).toMatchObject({ status: 'cancelled', startedAt: null, stripeFeeInvoiceId: fee!.id });
    expect(freeze.providerUndoneAt).toEqual(at);
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toMatchObject({
      status: 'active',
    });
    expect(await eventsOf(membership.id, 'membership.frozen')).toEqual([]);
    expect((await eventsOf(membership.id, 'membership.freeze_cancelled')).map((e) => e.data)).toEqual([
      expect.objectContaining({ freeze_id: freezeId, was: 'booked', reason: null, actor_user_id: null }),
    ]);

    // Later runs, the undo sweep's included, ask Stripe nothing more.
    await untilDone(() => startFreezes(jobDeps(t), new Date(at.getTime() + 20 * MINUTE)));
    expect(fake.requestsTo('POST', `/v1/subscriptions/${subscriptionId}/resume`)).toHaveLength(1);
    expect(fake.requestsTo('POST', `/v1/invoices/${fee!.id}/void`)).toHaveLength(1);
    expect(await eventsOf(membership.id, 'membership.freeze_cancelled')).toHaveLength(1);
  });

  it('when the membership stops being active while the job pauses the subscription, then the freeze is cancelled (membership_not_active) once, and the pause and the fee are undone', async () => {
    const { membership, subscriptionId, customerId, renewal, freezeId } = await bookedRecurringFreeze();
    await withPauseRacing(
      () => t.deps.db.membership.update({ where: { id: membership.id }, data: { status: 'paused_for_payment' } }),
      () => untilDone(() => startFreezes(jobDeps(t), justBefore(renewal))),
    );
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('active');
    expect(feeInvoices(customerId).map((invoice) => invoice.status)).toEqual(['void']);
    expect(await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } })).toMatchObject({
      status: 'cancelled',
      providerUndoneAt: expect.any(Date),
    });
    expect((await eventsOf(membership.id, 'membership.freeze_cancelled')).map((e) => e.data)).toEqual([
      expect.objectContaining({ was: 'booked', reason: 'membership_not_active' }),
    ]);
    expect(await eventsOf(membership.id, 'membership.frozen')).toEqual([]);
  });

  it('when the undo fails, then a warning is logged and the freeze keeps it pending; a run after the fee was paid resumes the subscription and refunds the fee, once', async () => {
    const { membership, subscriptionId, customerId, renewal, token, freezeId } = await bookedRecurringFreeze();
    const warn = jest.fn();
    const at = justBefore(renewal);
    const subscriptions = t.deps.stripe!.subscriptions;
    const resume = subscriptions.resume;
    subscriptions.resume = (() => Promise.reject(new Error('Stripe is unreachable'))) as unknown as typeof resume;
    try {
      await withPauseRacing(
        () => memberCancel(membership.id, freezeId, token),
        () => untilDone(() => startFreezes({ ...jobDeps(t), logger: { warn } }, at)),
      );
    } finally {
      subscriptions.resume = resume;
    }
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ freezeId }),
      expect.stringContaining('the undo is retried by the next run'),
    );
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('paused');
    const [fee] = feeInvoices(customerId);
    expect(await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } })).toMatchObject({
      status: 'cancelled',
      stripeFeeInvoiceId: fee!.id,
      providerUndoneAt: null,
    });

    // Stripe collects the fee meanwhile.
    await t.deps.stripe!.invoices.pay(fee!.id);
    // Not while a start attempt could still be undoing its own work; then by the sweep.
    await untilDone(() => startFreezes(jobDeps(t), new Date(at.getTime() + 5 * MINUTE)));
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('paused');
    const later = new Date(at.getTime() + 11 * MINUTE);
    await Promise.all([
      untilDone(() => startFreezes(jobDeps(t), later)),
      untilDone(() => startFreezes(jobDeps(t2), later)),
    ]);
    await untilDone(() => startFreezes(jobDeps(t), new Date(at.getTime() + 30 * MINUTE)));
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('active');
    expect(fake.refunds.filter((refund) => refund.metadata.invoice_id === fee!.id).map((r) => r.amount)).toEqual([500]);
    expect(
      (await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } })).providerUndoneAt,
    ).not.toBeNull();
    expect(await eventsOf(membership.id, 'membership.freeze_cancelled')).toHaveLength(1);
  });

  it('when the member cancels at the same moment as two job runs start the freeze, then whichever wins the subscription ends active, the membership active, the freeze cancelled with one event, and a fee is void unless the freeze had started', async () => {
    for (let round = 1; round <= 5; round += 1) {
      const { membership, subscriptionId, customerId, renewal, token, freezeId } = await bookedRecurringFreeze();
      const at = justBefore(renewal);
      const [cancelled] = await Promise.all([
        memberCancel(membership.id, freezeId, token),
        untilDone(() => startFreezes(jobDeps(t), at)),
        untilDone(() => startFreezes(jobDeps(t2), at)),
      ]);
      expect(cancelled.status).toBe(200);
      const subscription = fake.billing.subscriptions.get(subscriptionId)!;
      expect(subscription.status).toBe('active');
      expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toMatchObject({
        status: 'active',
      });
      const events = await eventsOf(membership.id, 'membership.freeze_cancelled');
      expect(events).toHaveLength(1);
      const was = (events[0]!.data as { was: string }).was;
      const fees = feeInvoices(customerId).map((invoice) => invoice.status);
      if (was === 'booked') {
        expect(fees.every((status) => status === 'void')).toBe(true);
        expect(await eventsOf(membership.id, 'membership.frozen')).toEqual([]);
      } else {
        // Started first: ended at once by the cancellation, which resumed the subscription.
        expect(fees).toEqual(['open']);
        expect(await eventsOf(membership.id, 'membership.frozen')).toHaveLength(1);
        expect(await eventsOf(membership.id, 'membership.unfrozen')).toHaveLength(1);
      }
    }
  });

  it('when Stripe already renewed the subscription before the job came, then the freeze is cancelled (renewed_before_start) without a pause or a fee', async () => {
    const { membership, subscriptionId, customerId, renewal, freezeId } = await bookedRecurringFreeze();
    fake.billing.cycle(subscriptionId, { outcome: 'paid' });
    // The job was late: after the renewal.
    await untilDone(() => startFreezes(jobDeps(t), new Date(renewal.getTime() + 45 * MINUTE)));
    expect(fake.requestsTo('POST', `/v1/subscriptions/${subscriptionId}/pause`)).toEqual([]);
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('active');
    expect(feeInvoices(customerId)).toEqual([]);
    expect(await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } })).toMatchObject({
      status: 'cancelled',
      frozenDays: 0,
    });
    expect((await eventsOf(membership.id, 'membership.freeze_cancelled')).map((e) => e.data)).toEqual([
      expect.objectContaining({ was: 'booked', reason: 'renewed_before_start', actor_user_id: null }),
    ]);
    expect(await eventsOf(membership.id, 'membership.frozen')).toEqual([]);
  });

  it('when Stripe renewed the subscription and the API converged that renewal (expires_at moved on) before a late job came, then the freeze is still cancelled (renewed_before_start) without a pause or a fee', async () => {
    const { membership, subscriptionId, customerId, renewal, freezeId } = await bookedRecurringFreeze();
    const renewed = fake.billing.cycle(subscriptionId, { outcome: 'paid' });
    const notified = await deliverStripeEvent(
      t,
      signedBillingEvent('invoice.paid', renewed.invoice!, { secret: TEST_WEBHOOK_SECRET }),
    );
    expect(notified.status).toBe(200);
    const nextRenewal = new Date(renewed.subscription.items.data[0]!.current_period_end * 1000);
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toMatchObject({
      status: 'active',
      expiresAt: nextRenewal,
    });
    // The worker was down through the renewal: the start job finds the freeze the day after its first day.
    await untilDone(() => startFreezes(jobDeps(t), new Date(addDays(dayOf(renewal), 1).getTime() + 9 * 60 * MINUTE)));
    expect(fake.requestsTo('POST', `/v1/subscriptions/${subscriptionId}/pause`)).toEqual([]);
    expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('active');
    expect(feeInvoices(customerId)).toEqual([]);
    expect(await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: freezeId } })).toMatchObject({
      status: 'cancelled',
      frozenDays: 0,
    });
    expect((await eventsOf(membership.id, 'membership.freeze_cancelled')).map((e) => e.data)).toEqual([
      expect.objectContaining({ was: 'booked', reason: 'renewed_before_start', actor_user_id: null }),
    ]);
    expect(await eventsOf(membership.id, 'membership.frozen')).toEqual([]);
    expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } })).toMatchObject({
      status: 'active',
      expiresAt: nextRenewal,
    });
  });

  it('then it starts 30 minutes before the renewal time, not at midnight: a renewal at 00:10 is paused the evening before, one at 14:00 not before 13:30', async () => {
    const renewalDay = addDays(today, 20);
    const cases = [
      { renewal: new Date(renewalDay.getTime() + 10 * MINUTE), early: -35, due: -25 },
      { renewal: new Date(renewalDay.getTime() + 14 * 60 * MINUTE), early: -13 * 60 - 55, due: -29 },
    ];
    for (const { renewal, early, due } of cases) {
      const { membership, subscriptionId } = await recurringMember();
      await t.deps.db.membership.update({ where: { id: membership.id }, data: { expiresAt: renewal } });
      const booked = await book(membership.id, {
        starts_on: formatDay(renewal),
        ends_on: formatDay(addDays(renewal, 6)),
      });
      expect(booked.status).toBe(201);
      await untilDone(() => startFreezes(jobDeps(t), new Date(renewal.getTime() + early * MINUTE)));
      expect(
        await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: booked.body.freeze_id } }),
      ).toMatchObject({ status: 'booked' });
      expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('active');
      await untilDone(() => startFreezes(jobDeps(t), new Date(renewal.getTime() + due * MINUTE)));
      expect(
        await t.deps.db.membershipFreeze.findUniqueOrThrow({ where: { id: booked.body.freeze_id } }),
      ).toMatchObject({ status: 'active' });
      expect(fake.billing.subscriptions.get(subscriptionId)!.status).toBe('paused');
      expect(await eventsOf(membership.id, 'membership.frozen')).toHaveLength(1);
    }
  });
});
