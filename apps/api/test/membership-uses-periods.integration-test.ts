import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bookingBody,
  clientIp,
  createTestApp,
  deliverStripeEvent,
  type Experience,
  type FakeInvoice,
  type FakeStripe,
  pendingRecurringMembership,
  placeHold,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  signedBillingEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type PlanOptions,
  type TestApp,
} from '@booking/test-kit';
import { termExpiry } from '../src/membership-sales/membership-term';

// Which allowance period a member's use counts against, on the real PostgreSQL with the fake
// Stripe: a visit counts in the period that contains its slot, so visits booked ahead into the
// next billing period use that period's allowance, and the renewal (driven by the provider's
// invoice.paid) finds them there instead of handing those days' visits out again. Booking ahead
// reaches the next period and no further. Uses made now at the desk count in the current period;
// a reschedule moves the visit to its new period; an upgrade made now keeps the period. Uses that a
// pod of the release before counts_at wrote (or moved) are placed at their slot before counting.

const DAY = 86_400_000;

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  demo = await seedTenant(t.deps);
});
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

const staff = () => ({ Authorization: `Bearer ${demo.api_keys.staff}` });
const manager = () => ({ Authorization: `Bearer ${demo.api_keys.manager}` });
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

async function memberToken(membershipId: string): Promise<string> {
  const res = await request(t.app).post(`/api/v1/memberships/${membershipId}/tokens`).set(staff());
  expect(res.status).toBe(201);
  return res.body.member_token as string;
}

/**
 * A monthly recurring membership (USD) on a plan that counts allowances by billing period, its
 * first invoice paid and notified: active for the period the fake Stripe started.
 */
async function recurringMember(plan: PlanOptions) {
  const m = await pendingRecurringMembership(t.deps.db, fake, demo.tenant.id, {
    currency: 'USD',
    plan: { allowancePeriod: 'term', ...plan },
  });
  const { invoice } = fake.billing.payFirstInvoice(m.subscriptionId);
  await deliverPaid(invoice);
  const membership = await t.deps.db.membership.findUniqueOrThrow({ where: { id: m.membershipId } });
  expect(membership.status).toBe('active');
  return { ...m, membership, token: await memberToken(m.membershipId) };
}

/** A dearer monthly recurring plan (USD, allowances by billing period) with its Price in the fake Stripe. */
async function dearerPlan(plan: PlanOptions) {
  const stripe = t.deps.stripe!;
  const product = await stripe.products.create({ name: 'Plus membership' });
  const price = await stripe.prices.create({
    product: product.id,
    unit_amount: 4_000,
    currency: 'usd',
    recurring: { interval: 'month' },
  });
  return seedMembershipPlan(t.deps.db, demo.tenant.id, {
    ...plan,
    billing: 'recurring',
    priceCents: 4_000,
    currency: 'USD',
    interval: 'month',
    allowancePeriod: 'term',
    stripePriceId: price.id,
  });
}

async function deliverPaid(invoice: FakeInvoice) {
  const answer = await deliverStripeEvent(
    t,
    signedBillingEvent('invoice.paid', invoice, { secret: TEST_WEBHOOK_SECRET }),
  );
  expect(answer.status).toBe(200);
}

/** The provider renews the subscription and its invoice.paid arrives. */
async function renew(subscriptionId: string) {
  const { invoice } = fake.billing.cycle(subscriptionId, { outcome: 'paid' });
  await deliverPaid(invoice!);
}

/** A slot of `experience` (default: the kayak tour, parties of 1 to 12) starting at `startsAt`, with room to spare. */
function slotAt(startsAt: Date, experience: Experience = demo.experiences[0]!) {
  return t.deps.db.slot.create({
    data: {
      tenantId: demo.tenant.id,
      experienceId: experience.id,
      startsAt,
      endsAt: new Date(startsAt.getTime() + 3_600_000),
      capacity: 50,
    },
  });
}

/** POST /api/bookings presenting the membership, for a fresh hold of `guests` on `slotId`. */
async function book(
  slotId: string,
  token: string,
  options: { guests?: number; guestPasses?: number; experience?: Experience } = {},
) {
  const experience = options.experience ?? demo.experiences[0]!;
  const guests = options.guests ?? 1;
  const ip = clientIp();
  const holdId = await placeHold(t, ip, experience, slotId, guests);
  return request(t.app)
    .post('/api/bookings')
    .set('X-Forwarded-For', ip)
    .send({
      ...bookingBody(demo, experience, slotId, holdId, guests),
      membership_token: token,
      ...(options.guestPasses !== undefined && { guest_passes: options.guestPasses }),
    });
}

const reschedule = (bookingId: string, slotId: string) =>
  request(t.app).post(`/api/bookings/${bookingId}/reschedule`).set(manager()).send({ slot_id: slotId });

const admitGuest = (membershipId: string) =>
  request(t.app).post(`/api/v1/memberships/${membershipId}/guest-passes/use`).set(staff()).send({ guest_count: 1 });

const visitsOf = (membershipId: string) =>
  t.deps.db.membershipUsage.findMany({ where: { membershipId, kind: 'visit' }, orderBy: { countsAt: 'asc' } });

describe('visits booked ahead into the next billing period', () => {
  it('when the next period’s visits are booked until none are left, then the current period keeps its own, and after the renewal the renewed period has none left for those days', async () => {
    const { membership, subscriptionId, token } = await recurringMember({ visitsPerPeriod: 2 });
    const renewal = membership.expiresAt!;
    const nextKey = `term-${dayOf(renewal)}`;
    const [first, second, third] = await Promise.all(
      [1, 2, 3].map((days) => slotAt(new Date(renewal.getTime() + days * DAY))),
    );

    const booked = [await book(first!.id, token), await book(second!.id, token)];
    expect(booked.map((res) => res.status)).toEqual([201, 201]);
    const refused = await book(third!.id, token);
    expect([refused.status, refused.body.error, refused.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'visit', remaining: 0, period_key: nextKey },
    ]);
    const reserved = await t.deps.db.event.findMany({
      where: { name: 'membership.visits_reserved', entityId: { in: booked.map((res) => res.body.booking_id) } },
    });
    expect(reserved.map((e) => e.data)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ remaining_visits: 1, period_key: nextKey }),
        expect.objectContaining({ remaining_visits: 0, period_key: nextKey }),
      ]),
    );
    expect((await visitsOf(membership.id)).map((u) => [u.countsAt, u.periodKey])).toEqual([
      [first!.startsAt, nextKey],
      [second!.startsAt, nextKey],
    ]);

    // This period's visits are its own: the bookings ahead took none of them.
    const thisPeriod = await book((await slotAt(new Date(Date.now() + DAY))).id, token);
    expect([thisPeriod.status, thisPeriod.body.member_discount_cents]).toEqual([201, 450]);

    await renew(subscriptionId);
    const renewed = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect(renewed.periodStart).toEqual(renewal);

    // The renewed period is the one the visits were booked into: nothing is handed out again.
    const again = await book(third!.id, token);
    expect([again.status, again.body.error, again.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'visit', remaining: 0, period_key: nextKey },
    ]);
    // The period after it has its own visits.
    const later = await book((await slotAt(new Date(renewed.expiresAt!.getTime() + DAY))).id, token);
    expect(later.status).toBe(201);
  });

  it('when guest passes are booked with a visit in the next period, then guests admitted at the desk now use the current period’s passes', async () => {
    const { membership, token } = await recurringMember({ guestPassesPerPeriod: 1 });
    const ahead = await slotAt(new Date(membership.expiresAt!.getTime() + DAY));
    expect((await book(ahead.id, token, { guests: 2, guestPasses: 1 })).status).toBe(201);

    const before = Date.now();
    const now = await admitGuest(membership.id);
    expect([now.status, now.body.period_key, now.body.remaining]).toEqual([
      201,
      `term-${dayOf(membership.periodStart!)}`,
      0,
    ]);
    // A desk use counts when it is recorded.
    expect(Date.parse(now.body.counts_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(now.body.counts_at)).toBeLessThanOrEqual(Date.now());
    const twice = await admitGuest(membership.id);
    expect([twice.status, twice.body.error, twice.body.detail?.period_key]).toEqual([
      409,
      'allowance_exhausted',
      `term-${dayOf(membership.periodStart!)}`,
    ]);
  });

  it('when two bookings race for the last visit of the next period, then exactly one is booked and the other is 409 allowance_exhausted', async () => {
    const { membership, token } = await recurringMember({ visitsPerPeriod: 1 });
    const startsAt = new Date(membership.expiresAt!.getTime() + 2 * DAY);
    // Two experiences' slots: the slot locks do not queue the bookings, the membership's lock does.
    const [kayak, other] = [demo.experiences[0]!, demo.experiences[1]!];
    const slots = await Promise.all([slotAt(startsAt, kayak), slotAt(new Date(startsAt.getTime() + DAY), other)]);
    // The second experience takes parties of two or more: the member and a paying guest.
    const answers = await Promise.all([
      book(slots[0].id, token, { experience: kayak }),
      book(slots[1].id, token, { experience: other, guests: 2 }),
    ]);
    expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
    expect(answers.find((res) => res.status === 409)!.body.error).toBe('allowance_exhausted');
    const visits = await visitsOf(membership.id);
    expect(visits.map((u) => u.bookingId)).toEqual([answers.find((res) => res.status === 201)!.body.booking_id]);
  });

  it('when the membership is set to end at its period end, then a visit after the end is 409 membership_not_active and one before it is booked', async () => {
    const { membership, token } = await recurringMember({});
    const cancelled = await request(t.app)
      .post(`/api/v1/memberships/${membership.id}/cancel`)
      .set(manager())
      .send({ at: 'period_end' });
    expect(cancelled.status).toBe(200);
    const after = await book((await slotAt(new Date(membership.expiresAt!.getTime() + DAY))).id, token);
    expect([after.status, after.body.error, after.body.detail?.expires_at]).toEqual([
      409,
      'membership_not_active',
      membership.expiresAt!.toISOString(),
    ]);
    expect((await book((await slotAt(new Date(Date.now() + DAY))).id, token)).status).toBe(201);
    expect(await visitsOf(membership.id)).toHaveLength(1);
  });
});

describe('booking ahead reaches the next period and no further', () => {
  it('when a visit is after the next billing period, then booking it or moving a booking to it is 409 allowance_exhausted saying when its period opens, and nothing is reserved there', async () => {
    // Free admission: the bookings are confirmed at once and can be moved.
    const { membership, token } = await recurringMember({ visitsPerPeriod: 4, memberDiscountPercent: 100 });
    const renewal = membership.expiresAt!;
    // The next period ends a calendar month after the renewal: 40 days after it is the one after.
    const [far, today] = await Promise.all([
      slotAt(new Date(renewal.getTime() + 40 * DAY)),
      slotAt(new Date(Date.now() + DAY)),
    ]);
    // Stripe's periods run from its anchor, the first period's start: the one after next starts two months on.
    const twoAhead = termExpiry(membership.periodStart!, { termDays: null, termMonths: 2 });
    const notOpen = {
      kind: 'visit',
      remaining: 0,
      period_key: `term-${dayOf(twoAhead)}`,
      opens_at: renewal.toISOString(),
    };

    const refused = await book(far.id, token);
    expect([refused.status, refused.body.error, refused.body.detail]).toEqual([409, 'allowance_exhausted', notOpen]);
    const booked = await book(today.id, token);
    expect(booked.status).toBe(201);
    const moved = await reschedule(booked.body.booking_id, far.id);
    expect([moved.status, moved.body.error, moved.body.detail]).toEqual([409, 'allowance_exhausted', notOpen]);
    expect((await visitsOf(membership.id)).map((u) => [u.bookingId, u.countsAt])).toEqual([
      [booked.body.booking_id, today.startsAt],
    ]);
  });

  it('when a plan counts by calendar month, then a visit in the month after next is refused and one next month is booked', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { currency: 'USD', allowancePeriod: 'month' });
    const membership = await seedMembership(t.deps.db, plan, { expiresAt: new Date(Date.now() + 365 * DAY) });
    const token = await memberToken(membership.id);
    const monthStart = (ahead: number) => {
      const now = new Date();
      return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1, 10));
    };

    expect((await book((await slotAt(monthStart(1))).id, token)).status).toBe(201);
    const refused = await book((await slotAt(monthStart(2))).id, token);
    expect([refused.status, refused.body.error, refused.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      {
        kind: 'visit',
        remaining: 0,
        period_key: monthStart(2).toISOString().slice(0, 7),
        opens_at: new Date(monthStart(1).getTime() - 10 * 3_600_000).toISOString(),
      },
    ]);
  });
});

describe('an upgrade made now', () => {
  it('when the member upgrades now after using the period’s guest pass, then the upgrade’s invoice leaves the period where it was and the pass stays used', async () => {
    const { membership, subscriptionId } = await recurringMember({ guestPassesPerPeriod: 1 });
    // The fake Stripe has no clock: the period began ten days ago and the pass was used five days ago.
    const began = new Date(Date.now() - 10 * DAY);
    await t.deps.db.membership.update({ where: { id: membership.id }, data: { periodStart: began } });
    expect((await admitGuest(membership.id)).status).toBe(201);
    await t.deps.db.membershipUsage.updateMany({
      where: { membershipId: membership.id },
      data: { countsAt: new Date(Date.now() - 5 * DAY) },
    });

    const plus = await dearerPlan({ guestPassesPerPeriod: 1 });
    const change = await request(t.app)
      .post(`/api/v1/memberships/${membership.id}/plan-change`)
      .set(manager())
      .send({ to_plan_id: plus.id, when: 'now' });
    expect(change.status).toBe(201);
    // What Stripe sends: a subscription_update invoice for the rest of the period, ending at expires_at.
    const invoice = fake.billing.invoices.get(fake.billing.subscriptions.get(subscriptionId)!.latest_invoice!)!;
    expect([invoice.billing_reason, invoice.lines.data.at(-1)!.period.end * 1000]).toEqual([
      'subscription_update',
      membership.expiresAt!.getTime(),
    ]);
    await deliverPaid(invoice);

    const upgraded = await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } });
    expect([upgraded.planId, upgraded.periodStart, upgraded.expiresAt]).toEqual([plus.id, began, membership.expiresAt]);
    const again = await admitGuest(membership.id);
    expect([again.status, again.body.error, again.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'guest_pass', remaining: 0, period_key: `term-${dayOf(began)}` },
    ]);
  });
});

describe('uses a pod of the release before counts_at wrote or moved, during the rollout', () => {
  it('when an old pod wrote a booking’s visit without counts_at, then the next count places it at the slot’s start: the next period is full, and the membership view shows the instant', async () => {
    const { membership, token } = await recurringMember({ visitsPerPeriod: 1 });
    const renewal = membership.expiresAt!;
    const [ahead, alsoAhead] = await Promise.all([
      slotAt(new Date(renewal.getTime() + DAY)),
      slotAt(new Date(renewal.getTime() + 2 * DAY)),
    ]);
    const booked = await book(ahead.id, token);
    expect(booked.status).toBe(201);
    // Written again as an old pod writes it: its Prisma client does not know the column.
    await t.deps.db.$executeRaw`DELETE FROM membership_usages WHERE booking_id = ${booked.body.booking_id}::uuid`;
    await t.deps.db.$executeRaw`
      INSERT INTO membership_usages (id, membership_id, kind, status, quantity, period_key, booking_id)
      VALUES (gen_random_uuid(), ${membership.id}::uuid, 'visit', 'reserved', 1,
              ${`term-${dayOf(membership.periodStart!)}`}, ${booked.body.booking_id}::uuid)`;
    const instants = async () =>
      (await request(t.app).get(`/api/v1/memberships/${membership.id}`).set(staff())).body.usages.map(
        (u: { booking_id: string; counts_at: string | null }) => [u.booking_id, u.counts_at],
      );
    expect(await instants()).toEqual([[booked.body.booking_id, null]]);

    const refused = await book(alsoAhead.id, token);
    expect([refused.status, refused.body.error, refused.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'visit', remaining: 0, period_key: `term-${dayOf(renewal)}` },
    ]);
    // This period's visit is untouched; the booking that takes it keeps the placed instant.
    const today = await book((await slotAt(new Date(Date.now() + DAY))).id, token);
    expect(today.status).toBe(201);
    expect(await instants()).toEqual(expect.arrayContaining([[booked.body.booking_id, ahead.startsAt.toISOString()]]));
  });

  it('when an old pod moved a booking into the next period without moving its visit’s instant, then the next count follows the booking: the next period is full and this one has its visit back', async () => {
    const { membership, token } = await recurringMember({ visitsPerPeriod: 1 });
    const renewal = membership.expiresAt!;
    const [today, ahead, alsoAhead, later] = await Promise.all([
      slotAt(new Date(Date.now() + DAY)),
      slotAt(new Date(renewal.getTime() + DAY)),
      slotAt(new Date(renewal.getTime() + 2 * DAY)),
      slotAt(new Date(Date.now() + 2 * DAY)),
    ]);
    const booked = await book(today.id, token);
    expect(booked.status).toBe(201);
    // The old pod's reschedule: the booking points at the new slot; a term plan's key did not change, so its uses were left alone.
    await t.deps.db.booking.update({ where: { id: booked.body.booking_id }, data: { slotId: ahead.id } });

    const refused = await book(alsoAhead.id, token);
    expect([refused.status, refused.body.error, refused.body.detail?.period_key]).toEqual([
      409,
      'allowance_exhausted',
      `term-${dayOf(renewal)}`,
    ]);
    const again = await book(later.id, token);
    expect(again.status).toBe(201);
    expect((await visitsOf(membership.id)).map((u) => [u.bookingId, u.countsAt])).toEqual([
      [again.body.booking_id, later.startsAt],
      [booked.body.booking_id, ahead.startsAt],
    ]);
  });
});

describe('a reschedule across a period boundary', () => {
  it('when a booking moves into a period with no visit left, then 409 allowance_exhausted and it stays; once there is room, its visit moves there and the period it left has it back', async () => {
    const { membership, token } = await recurringMember({ visitsPerPeriod: 1, memberDiscountPercent: 100 });
    const renewal = membership.expiresAt!;
    const [today, nextA, nextB] = await Promise.all([
      slotAt(new Date(Date.now() + DAY)),
      slotAt(new Date(renewal.getTime() + DAY)),
      slotAt(new Date(renewal.getTime() + 2 * DAY)),
    ]);
    const moving = await book(today.id, token);
    const blocking = await book(nextA.id, token);
    expect([moving.status, blocking.status]).toEqual([201, 201]);

    const refused = await reschedule(moving.body.booking_id, nextB.id);
    expect([refused.status, refused.body.error, refused.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'visit', remaining: 0, period_key: `term-${dayOf(renewal)}` },
    ]);
    const stayed = await t.deps.db.booking.findUniqueOrThrow({ where: { id: moving.body.booking_id } });
    expect(stayed.slotId).toBe(today.id);

    expect((await request(t.app).post(`/api/bookings/${blocking.body.booking_id}/cancel`).set(manager())).status).toBe(
      200,
    );
    expect((await reschedule(moving.body.booking_id, nextB.id)).status).toBe(200);
    const moved = await t.deps.db.membershipUsage.findMany({
      where: { bookingId: moving.body.booking_id },
      orderBy: { kind: 'asc' },
    });
    expect(moved.map((u) => [u.kind, u.countsAt, u.periodKey])).toEqual([
      ['visit', nextB.startsAt, `term-${dayOf(renewal)}`],
      ['discount', nextB.startsAt, `term-${dayOf(renewal)}`],
    ]);
    // The current period's visit went with the booking: it can be booked again.
    expect((await book((await slotAt(new Date(Date.now() + 2 * DAY))).id, token)).status).toBe(201);
  });
});

describe('a fixed-term membership counting by term', () => {
  it('when visits fill the term, then a later one in the term is refused as exhausted, one after the term as not active; a freeze that moves the end keeps the term’s visits counted', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, {
      currency: 'USD',
      allowancePeriod: 'term',
      visitsPerPeriod: 2,
    });
    const membership = await seedMembership(t.deps.db, plan, { expiresAt: new Date(Date.now() + 10 * DAY) });
    const token = await memberToken(membership.id);
    const key = `term-${dayOf(membership.periodStart!)}`;
    const at = (days: number) => slotAt(new Date(Date.now() + days * DAY));

    expect([(await book((await at(2)).id, token)).status, (await book((await at(8)).id, token)).status]).toEqual([
      201, 201,
    ]);
    const full = await book((await at(9)).id, token);
    expect([full.status, full.body.error, full.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'visit', remaining: 0, period_key: key },
    ]);
    const afterTerm = await at(12);
    const over = await book(afterTerm.id, token);
    expect([over.status, over.body.error]).toEqual([409, 'membership_not_active']);

    // A freeze ended moves the expiry out by the days frozen (unfreeze.ts): still the same term.
    await t.deps.db.membership.update({
      where: { id: membership.id },
      data: { expiresAt: new Date(Date.now() + 20 * DAY) },
    });
    const extended = await book(afterTerm.id, token);
    expect([extended.status, extended.body.error, extended.body.detail?.period_key]).toEqual([
      409,
      'allowance_exhausted',
      key,
    ]);
  });
});
