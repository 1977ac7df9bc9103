import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { hashGiftCardCode, signToken, verifyToken } from '@booking/signing';
import {
  bookingBody,
  clientIp,
  createBooking,
  createTestApp,
  type FakeStripe,
  payByCard,
  placeHold,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type PlanOptions,
  type TestApp,
} from '@booking/test-kit';
import { expireHeldBookings } from '../src/bookings/expire-held-bookings';

// Memberships presented with online bookings, on the real PostgreSQL and Redis with the fake
// Stripe: member tokens, visits and guest passes reserved in the booking transaction (never
// overdrawn by racing bookings), the member discount on what the customer pays, and what
// cancelling, expiry, refunds and check-in do to the reserved uses.

let fake: FakeStripe;
let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;

const staff = (tenant: DemoTenant = demo) => ({ Authorization: `Bearer ${tenant.api_keys.staff}` });
const manager = () => ({ Authorization: `Bearer ${demo.api_keys.manager}` });

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
});
afterAll(async () => {
  await t.close();
  await stopFakeStripe(fake);
});

/** An active membership of a new plan of `tenant` (USD), and its member token from the API. */
async function member(plan: PlanOptions = {}, tenant: DemoTenant = demo) {
  const created = await seedMembershipPlan(t.deps.db, tenant.tenant.id, { currency: 'USD', ...plan });
  const membership = await seedMembership(t.deps.db, created);
  const res = await request(t.app).post(`/api/v1/memberships/${membership.id}/tokens`).set(staff(tenant));
  expect(res.status).toBe(201);
  return { plan: created, membership, token: res.body.member_token as string };
}

const events = (name: string, entityId: string) => t.deps.db.event.findMany({ where: { name, entityId } });
const membershipEvents = (name: string, membershipId: string) =>
  t.deps.db.event.findMany({
    where: { tenantId: demo.tenant.id, name, data: { path: ['membership_id'], equals: membershipId } },
  });
const usagesOf = (membershipId: string) =>
  t.deps.db.membershipUsage.findMany({ where: { membershipId }, orderBy: [{ kind: 'asc' }] });

/** POST /api/bookings for a fresh hold of `guests` on slot `slotIndex` of the kayak tour. */
async function book(token: string | undefined, guests: number, extra: Record<string, unknown> = {}, slotIndex = 0) {
  const experience = demo.experiences[0]!;
  const slotId = experience.slots[slotIndex]!.id;
  const ip = clientIp();
  const holdId = await placeHold(t, ip, experience, slotId, guests);
  const body = {
    ...bookingBody(demo, experience, slotId, holdId, guests),
    ...(token !== undefined && { membership_token: token }),
    ...extra,
  };
  return { res: await request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body), ip, body };
}

describe('member tokens', () => {
  it('when staff issue tokens, then the member token names the membership and version, both are signed for their purpose, and nothing is stored', async () => {
    const { membership } = await member();
    const res = await request(t.app)
      .post(`/api/v1/memberships/${membership.id}/tokens`)
      .set(staff())
      .set('Idempotency-Key', `tokens-${membership.id}`);
    expect(res.status).toBe(201);
    const secret = t.deps.config.tokenSigningSecret;
    const memberClaims = verifyToken(secret, 'member', res.body.member_token);
    expect(memberClaims).toMatchObject({ subject: `${membership.id}:1`, tenantId: demo.tenant.id });
    expect(verifyToken(secret, 'membership_manage', res.body.manage_token).subject).toBe(`${membership.id}:1`);
    expect(res.body.expires_at).toBe(memberClaims.expiresAt.toISOString());
    const days = (Date.parse(res.body.expires_at) - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(t.deps.config.memberships.memberTokenTtlDays);

    const replay = await request(t.app)
      .post(`/api/v1/memberships/${membership.id}/tokens`)
      .set(staff())
      .set('Idempotency-Key', `tokens-${membership.id}`);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(res.body);
    // Signed, not stored: no row of the membership holds either secret.
    const row = JSON.stringify(await t.deps.db.membership.findUniqueOrThrow({ where: { id: membership.id } }));
    expect(row).not.toContain(res.body.member_token);
    expect(row).not.toContain(res.body.manage_token);
  });

  it("when another tenant's staff or an id that is no uuid asks, then it is 404 membership_not_found", async () => {
    const { membership } = await member();
    const foreign = await request(t.app).post(`/api/v1/memberships/${membership.id}/tokens`).set(staff(other));
    expect([foreign.status, foreign.body.error]).toEqual([404, 'membership_not_found']);
    const bad = await request(t.app).post('/api/v1/memberships/not-a-uuid/tokens').set(staff());
    expect([bad.status, bad.body.error]).toEqual([404, 'membership_not_found']);
  });
});

describe('a booking that presents a membership', () => {
  it('when it is made, then one visit and the guest passes are reserved, the member discount comes off what the card pays, and visits_reserved and discount_used (booking) are recorded once', async () => {
    const { plan, membership, token } = await member({ visitsPerPeriod: 4, guestPassesPerPeriod: 2 });
    const { res, ip } = await book(token, 2, { guest_passes: 1 });
    expect(res.status).toBe(201);
    // Two guests at 4500: 9000, less the plan's 10 %.
    expect(res.body).toMatchObject({ status: 'held', total_cents: 8100, member_discount_cents: 900 });
    const bookingId = res.body.booking_id as string;
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } });
    expect(booking).toMatchObject({ membershipId: membership.id, memberDiscountCents: 900, totalCents: 8100 });

    const usages = await usagesOf(membership.id);
    const slot = demo.experiences[0]!.slots[0]!;
    const periodKey = slot.starts_at.slice(0, 7);
    expect(usages.map((u) => [u.kind, u.status, u.quantity, u.amountCents, u.bookingId, u.periodKey])).toEqual([
      ['visit', 'reserved', 1, null, bookingId, periodKey],
      ['guest_pass', 'reserved', 1, null, bookingId, periodKey],
      ['discount', 'reserved', 1, 900, bookingId, periodKey],
    ]);

    const reserved = await events('membership.visits_reserved', bookingId);
    expect(reserved).toHaveLength(1);
    expect(reserved[0]!.data).toMatchObject({
      entity_type: 'booking',
      booking_id: bookingId,
      membership_id: membership.id,
      plan_id: plan.id,
      slot_id: slot.id,
      visits: 1,
      guest_passes: 1,
      remaining_visits: 3,
      period_key: periodKey,
    });
    const discount = await events('membership.discount_used', bookingId);
    expect(discount).toHaveLength(1);
    expect(discount[0]!.data).toMatchObject({
      entity_type: 'booking',
      membership_id: membership.id,
      plan_id: plan.id,
      booking_id: bookingId,
      order_id: null,
      discount_percent: 10,
      discount_cents: 900,
      currency: 'USD',
    });
    expect(JSON.stringify([reserved, discount])).not.toContain(token);

    // The card pays the discounted total.
    const intent = await payByCard(t, fake, res.body, ip);
    expect(intent.amount).toBe(8100);
    const confirmed = await events('booking.confirmed', bookingId);
    expect(confirmed[0]!.data).toMatchObject({ charge_amount_cents: 8100, net_paid_cents: 8100 });
  });

  it('when the same request is retried with its Idempotency-Key, then the same answer comes back and nothing is reserved twice', async () => {
    const { membership, token } = await member();
    const experience = demo.experiences[0]!;
    const slotId = experience.slots[0]!.id;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slotId, 1);
    const body = { ...bookingBody(demo, experience, slotId, holdId, 1), membership_token: token };
    const send = () =>
      request(t.app)
        .post('/api/bookings')
        .set('X-Forwarded-For', ip)
        .set('Idempotency-Key', `member-${holdId}`)
        .send(body);
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.body.member_discount_cents).toBe(450);
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toMatchObject({
      booking_id: first.body.booking_id,
      total_cents: 4050,
      member_discount_cents: 450,
    });
    expect(await usagesOf(membership.id)).toHaveLength(2);
    expect(await events('membership.visits_reserved', first.body.booking_id)).toHaveLength(1);
  });

  it('when the plan does not discount bookings, then the visit is reserved at the full price and no discount_used is recorded', async () => {
    const { membership, token } = await member({ visitsPerPeriod: null });
    await t.deps.db.membershipPlan.update({ where: { id: membership.planId }, data: { discountOnBookings: false } });
    const { res } = await book(token, 1);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ total_cents: 4500, member_discount_cents: 0 });
    const reserved = await events('membership.visits_reserved', res.body.booking_id);
    expect(reserved.map((e) => (e.data as { remaining_visits: unknown }).remaining_visits)).toEqual([null]);
    expect(await events('membership.discount_used', res.body.booking_id)).toHaveLength(0);
    expect((await usagesOf(membership.id)).map((u) => u.kind)).toEqual(['visit']);
  });

  it('when the token is forged, of another tenant or of an earlier holder, then it is 400 member_token_invalid and nothing is booked', async () => {
    const { membership, token } = await member();
    const forged = await book(`${token.slice(0, -2)}xx`, 1);
    expect([forged.res.status, forged.res.body.error]).toEqual([400, 'member_token_invalid']);

    const foreign = await member({}, other);
    const otherTenant = await book(foreign.token, 1);
    expect([otherTenant.res.status, otherTenant.res.body.error]).toEqual([400, 'member_token_invalid']);
    // Signed for this tenant but naming the other tenant's membership.
    const crossed = signToken(t.deps.config.tokenSigningSecret, 'member', {
      subject: `${foreign.membership.id}:1`,
      tenantId: demo.tenant.id,
      ttlSeconds: 600,
    });
    const crossedRes = await book(crossed, 1);
    expect([crossedRes.res.status, crossedRes.res.body.error]).toEqual([400, 'member_token_invalid']);

    await t.deps.db.membership.update({ where: { id: membership.id }, data: { tokenVersion: 2 } });
    const stale = await book(token, 1);
    expect([stale.res.status, stale.res.body.error]).toEqual([400, 'member_token_invalid']);

    for (const attempt of [forged, otherTenant, crossedRes, stale]) {
      expect(await t.deps.db.booking.count({ where: { holdId: attempt.body.hold_id } })).toBe(0);
    }
    expect(await usagesOf(membership.id)).toEqual([]);
  });

  it('when guest_passes is more than guest_count - 1 or comes without a token, then it is 400 invalid_body', async () => {
    const { token } = await member();
    const tooMany = await book(token, 2, { guest_passes: 2 });
    expect([tooMany.res.status, tooMany.res.body.error]).toEqual([400, 'invalid_body']);
    expect(tooMany.res.body.detail[0].field).toBe('/guest_passes');
    const tokenless = await book(undefined, 2, { guest_passes: 1 });
    expect([tokenless.res.status, tokenless.res.body.error]).toEqual([400, 'invalid_body']);
    const negative = await book(token, 2, { guest_passes: -1 });
    expect([negative.res.status, negative.res.body.error]).toEqual([400, 'invalid_body']);
  });

  it('when the membership is frozen, or a fixed term ends before the slot, then it is 409 membership_not_active', async () => {
    const frozen = await member();
    await t.deps.db.membership.update({ where: { id: frozen.membership.id }, data: { status: 'frozen' } });
    const refused = await book(frozen.token, 1);
    expect([refused.res.status, refused.res.body.error, refused.res.body.detail?.status]).toEqual([
      409,
      'membership_not_active',
      'frozen',
    ]);

    const ending = await member();
    const slotStart = new Date(demo.experiences[0]!.slots[0]!.starts_at);
    await t.deps.db.membership.update({
      where: { id: ending.membership.id },
      data: { expiresAt: new Date(slotStart.getTime() - 60_000) },
    });
    const late = await book(ending.token, 1);
    expect([late.res.status, late.res.body.error]).toEqual([409, 'membership_not_active']);
    expect(await usagesOf(frozen.membership.id)).toEqual([]);
    expect(await usagesOf(ending.membership.id)).toEqual([]);
  });

  it('when the plan requires a photo and the holder has none yet, then it is 409 holder_photo_required and nothing is booked or reserved; once it is captured the booking is made', async () => {
    const { membership, token } = await member({ requiresPhoto: true });
    const refused = await book(token, 2, { guest_passes: 1 }, 3);
    expect([refused.res.status, refused.res.body.error, refused.res.body.detail]).toEqual([
      409,
      'holder_photo_required',
      { membership_id: membership.id },
    ]);
    expect(await usagesOf(membership.id)).toEqual([]);
    expect(await t.deps.db.booking.count({ where: { membershipId: membership.id } })).toBe(0);
    expect(await membershipEvents('membership.visits_reserved', membership.id)).toHaveLength(0);

    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('pixels')]);
    const photo = await request(t.app)
      .put(`/api/v1/memberships/${membership.id}/holder-photo`)
      .set(staff())
      .set('Content-Type', 'image/png')
      .send(png);
    expect(photo.status).toBe(200);
    // Slot 3 (five days out): the seats other tests here count on are left alone.
    const accepted = await book(token, 2, { guest_passes: 1 }, 3);
    expect(accepted.res.status).toBe(201);
    expect((await usagesOf(membership.id)).map((u) => [u.kind, u.status])).toEqual(
      expect.arrayContaining([
        ['visit', 'reserved'],
        ['guest_pass', 'reserved'],
      ]),
    );
    expect(await membershipEvents('membership.visits_reserved', membership.id)).toHaveLength(1);
  });

  it('when the visits or guest passes of the period are used up, then it is 409 allowance_exhausted', async () => {
    const { membership, token } = await member({ visitsPerPeriod: 1, guestPassesPerPeriod: 1 });
    const passes = await book(token, 3, { guest_passes: 2 });
    expect([passes.res.status, passes.res.body.error, passes.res.body.detail?.kind]).toEqual([
      409,
      'allowance_exhausted',
      'guest_pass',
    ]);
    const first = await book(token, 2, { guest_passes: 1 });
    expect(first.res.status).toBe(201);
    const second = await book(token, 1);
    expect([second.res.status, second.res.body.error, second.res.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'visit', remaining: 0, period_key: demo.experiences[0]!.slots[0]!.starts_at.slice(0, 7) },
    ]);
    expect(await membershipEvents('membership.visits_reserved', membership.id)).toHaveLength(1);
  });

  it('when two bookings race for the last visit, then exactly one is booked and the other is 409 allowance_exhausted', async () => {
    const { membership, token } = await member({ visitsPerPeriod: 1 });
    // Two experiences' slots of the same day: the slot locks do not queue them, the membership's does.
    const [first, second] = [demo.experiences[0]!, demo.experiences[1]!];
    expect(first.slots[0]!.starts_at.slice(0, 7)).toBe(second.slots[0]!.starts_at.slice(0, 7));
    const ips = [clientIp(), clientIp()];
    const picks = [first, second].map((experience, i) => ({
      experience,
      slotId: experience.slots[0]!.id,
      ip: ips[i]!,
    }));
    // The second experience takes parties of two or more: the member and a paying guest.
    const holds = await Promise.all(picks.map((p, i) => placeHold(t, p.ip, p.experience, p.slotId, i + 1)));
    const answers = await Promise.all(
      picks.map((p, i) =>
        request(t.app)
          .post('/api/bookings')
          .set('X-Forwarded-For', p.ip)
          .send({ ...bookingBody(demo, p.experience, p.slotId, holds[i]!, i + 1), membership_token: token }),
      ),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
    expect(answers.find((res) => res.status === 409)!.body.error).toBe('allowance_exhausted');
    expect(await membershipEvents('membership.visits_reserved', membership.id)).toHaveLength(1);
    const visits = (await usagesOf(membership.id)).filter((u) => u.kind === 'visit');
    expect(visits).toHaveLength(1);
    expect(visits[0]!.bookingId).toBe(answers.find((res) => res.status === 201)!.body.booking_id);
  });
});

describe('what happens to the reserved uses afterwards', () => {
  it('when the booking is cancelled, then its uses are released in the same change, with no membership event, and the visit can be booked again', async () => {
    const { membership, token } = await member({ visitsPerPeriod: 1 });
    const { res } = await book(token, 2, { guest_passes: 1 }, 1);
    const ofMembership = () =>
      t.deps.db.event.count({
        where: { tenantId: demo.tenant.id, data: { path: ['membership_id'], equals: membership.id } },
      });
    const eventsBefore = await ofMembership();
    const cancelled = await request(t.app).post(`/api/bookings/${res.body.booking_id}/cancel`).set(manager());
    expect(cancelled.status).toBe(200);
    const usages = await usagesOf(membership.id);
    expect(usages.map((u) => u.status)).toEqual(['released', 'released', 'released']);
    expect(usages.every((u) => u.releasedAt !== null)).toBe(true);
    expect(await ofMembership()).toBe(eventsBefore);
    const again = await book(token, 1, {}, 1);
    expect(again.res.status).toBe(201);
  });

  it('when an unpaid booking expires, then the expiry job releases its uses', async () => {
    const { membership, token } = await member({ visitsPerPeriod: 1 });
    const { res } = await book(token, 1, {}, 1);
    // Far enough in the past that the sweep, with its grace, picks this booking and no other test's.
    await t.deps.db.booking.update({
      where: { id: res.body.booking_id },
      data: { holdExpiresAt: new Date('2001-01-01T00:00:00Z') },
    });
    const graceSeconds = Math.floor((Date.now() - Date.parse('2002-01-01T00:00:00Z')) / 1000);
    expect(await expireHeldBookings(t.deps, graceSeconds)).toBe(1);
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: res.body.booking_id } });
    expect(booking.status).toBe('cancelled');
    expect((await usagesOf(membership.id)).map((u) => u.status)).toEqual(['released', 'released']);
  });

  it('when a card-paid booking is refunded in full, then its uses are released', async () => {
    const { membership, token } = await member({ visitsPerPeriod: 2 });
    const { res, ip } = await book(token, 1, {}, 1);
    await payByCard(t, fake, res.body, ip);
    const refund = await request(t.app)
      .post('/api/payments/refunds')
      .set(manager())
      .send({ booking_id: res.body.booking_id, amount_cents: 4050 });
    expect(refund.status).toBe(201);
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: res.body.booking_id } });
    expect(booking.status).toBe('refunded');
    expect((await usagesOf(membership.id)).map((u) => u.status)).toEqual(['released', 'released']);
  });

  it('when a confirmed booking is checked in, then its uses are consumed and a later cancellation leaves them so', async () => {
    const { membership, token } = await member();
    const booked = await createBooking(t, demo, {
      guests: 2,
      slotIndex: 1,
      giftCardCode: demo.gift_cards[0]!.code,
      body: { membership_token: token, guest_passes: 1 },
    });
    expect(booked).toMatchObject({ status: 'confirmed', total_cents: 8100, gift_card_applied_cents: 8100 });
    const checkIn = await request(t.app).post(`/api/bookings/${booked.booking_id}/check-in`).set(staff());
    expect(checkIn.status).toBe(200);
    expect((await usagesOf(membership.id)).map((u) => u.status)).toEqual(['consumed', 'consumed', 'consumed']);
    await request(t.app).post(`/api/bookings/${booked.booking_id}/cancel`).set(manager()).expect(200);
    expect((await usagesOf(membership.id)).map((u) => u.status)).toEqual(['consumed', 'consumed', 'consumed']);
  });
});

describe('free member bookings and changes to member bookings', () => {
  /** A slot of the kayak tour `days` out with room to spare (the seeded slots fill up in this file). */
  async function slotIn(days: number) {
    const startsAt = new Date(Date.now() + days * 86_400_000);
    return t.deps.db.slot.create({
      data: {
        tenantId: demo.tenant.id,
        experienceId: demo.experiences[0]!.id,
        startsAt,
        endsAt: new Date(startsAt.getTime() + 3_600_000),
        capacity: 50,
      },
    });
  }
  /** POST /api/bookings on `slotId` for a fresh hold of `guests`. */
  async function bookOn(slotId: string, token: string, guests: number, extra: Record<string, unknown> = {}) {
    const experience = demo.experiences[0]!;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slotId, guests);
    const body = { ...bookingBody(demo, experience, slotId, holdId, guests), membership_token: token, ...extra };
    return request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body);
  }
  // Visits may be booked into this calendar month and the next (month plans): a slot later in
  // this month, and one in the middle of the next.
  const daysUntil = (at: number) => (at - Date.now()) / 86_400_000;
  const monthStart = (ahead: number) => {
    const now = new Date();
    return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + ahead, 1);
  };
  const thisMonthSlot = () => slotIn(daysUntil(monthStart(1)) / 2);
  const farSlot = () => slotIn(daysUntil(monthStart(1) + 14.5 * 86_400_000));
  const reschedule = (bookingId: string, slotId: string) =>
    request(t.app).post(`/api/bookings/${bookingId}/reschedule`).set(manager()).send({ slot_id: slotId });

  it('when the member discount leaves nothing to pay, then the booking is confirmed at once (method membership) and a gift card presented is not charged', async () => {
    const { membership, token } = await member({ memberDiscountPercent: 100 });
    const card = demo.gift_cards[0]!;
    const before = await t.deps.db.giftCard.findFirstOrThrow({
      where: { tenantId: demo.tenant.id, codeHash: hashGiftCardCode(card.code) },
    });

    const res = await bookOn((await slotIn(1)).id, token, 1, { gift_card_code: card.code });

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'confirmed', payment_complete: true, total_cents: 0 });
    const confirmed = await events('booking.confirmed', res.body.booking_id);
    expect(confirmed.map((e) => e.data)).toEqual([
      expect.objectContaining({ method: 'membership', net_paid_cents: 0 }),
    ]);
    expect(await events('gift_card.redeemed', res.body.booking_id)).toHaveLength(0);
    const after = await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: before.id } });
    expect(after.balanceCents).toBe(before.balanceCents);
    expect(await usagesOf(membership.id)).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'visit', status: 'reserved' })]),
    );
  });

  it('when the membership starts later, then a slot before its start is 409 membership_not_active with starts_at and nothing is reserved; a slot on or after it is booked today', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { currency: 'USD', memberDiscountPercent: 100 });
    const startsAt = new Date(Date.now() + 3 * 86_400_000);
    const membership = await seedMembership(t.deps.db, plan, { startsAt });
    const tokens = await request(t.app).post(`/api/v1/memberships/${membership.id}/tokens`).set(staff());
    const token = tokens.body.member_token as string;

    const early = await bookOn((await slotIn(1)).id, token, 1);
    expect([early.status, early.body.error, early.body.detail]).toEqual([
      409,
      'membership_not_active',
      { status: 'active', starts_at: startsAt.toISOString() },
    ]);
    expect(await usagesOf(membership.id)).toEqual([]);

    const later = await bookOn((await slotIn(4)).id, token, 1);
    expect([later.status, later.body.status]).toEqual([201, 'confirmed']);
    expect(await usagesOf(membership.id)).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'visit', status: 'reserved' })]),
    );
  });

  it('when a member booking changes its party, then 409 booking_not_amendable: its visits and discount were counted for its party', async () => {
    const { token } = await member({ memberDiscountPercent: 100 });
    const res = await bookOn((await slotIn(1)).id, token, 2);
    expect(res.body.status).toBe('confirmed');

    const party = await request(t.app)
      .post(`/api/bookings/${res.body.booking_id}/party`)
      .set(manager())
      .send({ guest_count: 1 });

    expect([party.status, party.body.error]).toEqual([409, 'booking_not_amendable']);
    const row = await t.deps.db.booking.findUniqueOrThrow({ where: { id: res.body.booking_id } });
    expect([row.guestCount, row.totalCents]).toEqual([2, 0]);
  });

  it('when a member booking moves to another month, then its visit moves into that month’s allowance, refused when it is used up; past a fixed term, refused as not active', async () => {
    const near = await thisMonthSlot();
    const far = await farSlot();
    const month = far.startsAt.toISOString().slice(0, 7);

    // Room in the far month: the visit moves with the booking.
    const roomy = await member({ memberDiscountPercent: 100, visitsPerPeriod: 1 });
    const moved = await bookOn(near.id, roomy.token, 1);
    expect((await reschedule(moved.body.booking_id, far.id)).status).toBe(200);
    expect((await usagesOf(roomy.membership.id)).map((u) => [u.kind, u.periodKey])).toEqual([
      ['visit', month],
      ['discount', month],
    ]);

    // The far month's only visit is already used: the move is refused and nothing moves.
    const full = await member({ memberDiscountPercent: 100, visitsPerPeriod: 1 });
    await t.deps.db.membershipUsage.create({
      data: {
        membershipId: full.membership.id,
        kind: 'visit',
        status: 'consumed',
        quantity: 1,
        periodKey: month,
        countsAt: far.startsAt,
      },
    });
    const stuck = await bookOn(near.id, full.token, 1);
    const refused = await reschedule(stuck.body.booking_id, far.id);
    expect([refused.status, refused.body.error]).toEqual([409, 'allowance_exhausted']);
    expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: stuck.body.booking_id } })).slotId).toBe(near.id);

    // A fixed term that ends before the far slot: not a visit this membership can pay for.
    const ending = await seedMembershipPlan(t.deps.db, demo.tenant.id, { currency: 'USD', memberDiscountPercent: 100 });
    const short = await seedMembership(t.deps.db, ending, { expiresAt: new Date(Date.now() + 10 * 86_400_000) });
    const tokens = await request(t.app).post(`/api/v1/memberships/${short.id}/tokens`).set(staff());
    const booked = await bookOn(near.id, tokens.body.member_token as string, 1);
    expect(booked.status).toBe(201);
    const expired = await reschedule(booked.body.booking_id, far.id);
    expect([expired.status, expired.body.error]).toEqual([409, 'membership_not_active']);
  });
});
