import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  createBooking,
  createTestApp,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  type PlanOptions,
  type TestApp,
} from '@booking/test-kit';

// Using a membership at the desk and the till, on the real PostgreSQL and Redis: benefit uses
// and guest passes counted against the period's allowance (never overdrawn by two tills), and
// the member discount on retail orders, recorded as a use when the order settles.

let t: TestApp;
let demo: DemoTenant;
let other: DemoTenant;
let shiftId: string;

const staff = (tenant: DemoTenant = demo) => ({ Authorization: `Bearer ${tenant.api_keys.staff}` });

beforeAll(async () => {
  t = createTestApp();
  [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
  const shift = await request(t.app).post('/api/pos/shifts/open').set(staff()).send({ starting_cash_cents: 0 });
  shiftId = shift.body.shift_id;
});
afterAll(async () => {
  await t.close();
});

async function member(plan: PlanOptions = {}, tenant: DemoTenant = demo) {
  const created = await seedMembershipPlan(t.deps.db, tenant.tenant.id, { currency: 'USD', ...plan });
  const membership = await seedMembership(t.deps.db, created);
  const tokens = await request(t.app).post(`/api/v1/memberships/${membership.id}/tokens`).set(staff(tenant));
  return { plan: created, membership, token: tokens.body.member_token as string };
}

const events = (name: string, entityId: string) => t.deps.db.event.findMany({ where: { name, entityId } });
const useBenefit = (membershipId: string, benefitId: string, body: object, key?: string) => {
  const req = request(t.app).post(`/api/v1/memberships/${membershipId}/benefits/${benefitId}/use`).set(staff());
  return (key ? req.set('Idempotency-Key', key) : req).send(body);
};
const useGuestPasses = (membershipId: string, body: object, tenant: DemoTenant = demo) =>
  request(t.app).post(`/api/v1/memberships/${membershipId}/guest-passes/use`).set(staff(tenant)).send(body);
const thisMonth = () => new Date().toISOString().slice(0, 7);

describe('benefits used at the desk', () => {
  it('when staff record a use, then it is consumed with what is left, and membership.benefit_used is recorded once, a retry with the same key included', async () => {
    const { plan, membership } = await member({ benefits: [{ name: 'Coffee', quantityPerPeriod: 3 }] });
    const coffee = plan.benefits[0]!;
    const first = await useBenefit(membership.id, coffee.id, { quantity: 2 }, `coffee-${membership.id}`);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      membership_id: membership.id,
      kind: 'benefit',
      status: 'consumed',
      quantity: 2,
      benefit_id: coffee.id,
      period_key: thisMonth(),
      remaining: 1,
    });
    const replay = await useBenefit(membership.id, coffee.id, { quantity: 2 }, `coffee-${membership.id}`);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);

    const used = await events('membership.benefit_used', membership.id);
    expect(used).toHaveLength(1);
    expect(used[0]!.data).toMatchObject({
      entity_type: 'membership',
      membership_id: membership.id,
      plan_id: plan.id,
      customer_id: membership.customerId,
      holder_customer_id: membership.holderCustomerId,
      benefit_id: coffee.id,
      benefit_name: 'Coffee',
      quantity: 2,
      remaining: 1,
      period_key: thisMonth(),
      order_id: null,
    });
    expect(await t.deps.db.membershipUsage.count({ where: { membershipId: membership.id } })).toBe(1);

    const over = await useBenefit(membership.id, coffee.id, { quantity: 2 });
    expect([over.status, over.body.error, over.body.detail]).toEqual([
      409,
      'allowance_exhausted',
      { kind: 'benefit', remaining: 1, period_key: thisMonth() },
    ]);
    expect(await events('membership.benefit_used', membership.id)).toHaveLength(1);
  });

  it('when a benefit is unlimited and names an order, then remaining is null and the order is in the event', async () => {
    const { plan, membership } = await member({ benefits: [{ name: 'Towel', quantityPerPeriod: null }] });
    const order = await request(t.app)
      .post('/api/pos/orders')
      .set(staff())
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [{ type: 'product', description: 'tea', quantity: 1, unit_price_cents: 300 }],
      });
    const res = await useBenefit(membership.id, plan.benefits[0]!.id, { quantity: 5, order_id: order.body.order_id });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ remaining: null, order_id: order.body.order_id });
    const [used] = await events('membership.benefit_used', membership.id);
    expect(used!.data).toMatchObject({ remaining: null, order_id: order.body.order_id, quantity: 5 });
  });

  it('when two tills use the last one at once, then exactly one use is recorded', async () => {
    const { plan, membership } = await member({ benefits: [{ name: 'Locker', quantityPerPeriod: 1 }] });
    const answers = await Promise.all(
      [1, 2].map(() => useBenefit(membership.id, plan.benefits[0]!.id, { quantity: 1 })),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
    expect(answers.find((res) => res.status === 409)!.body.error).toBe('allowance_exhausted');
    expect(await events('membership.benefit_used', membership.id)).toHaveLength(1);
  });

  it('when the benefit, the membership or the order is unknown or foreign, or the membership not in use, then it is refused with its code', async () => {
    const { plan, membership } = await member();
    const foreign = await member({}, other);
    const coffee = plan.benefits[0]!.id;
    const cases = [
      [await useBenefit(membership.id, foreign.plan.benefits[0]!.id, { quantity: 1 }), 404, 'benefit_not_found'],
      [await useBenefit(membership.id, 'nope', { quantity: 1 }), 404, 'benefit_not_found'],
      [
        await useBenefit(foreign.membership.id, foreign.plan.benefits[0]!.id, { quantity: 1 }),
        404,
        'membership_not_found',
      ],
      [await useBenefit(membership.id, coffee, { quantity: 0 }), 400, 'invalid_body'],
      [
        await useBenefit(membership.id, coffee, { quantity: 1, order_id: '7d0c1f8e-2a3d-4e5f-8a9b-0c1d2e3f4a5b' }),
        404,
        'order_not_found',
      ],
    ] as const;
    expect(cases.map(([res]) => [res.status, res.body.error])).toEqual(cases.map(([, status, code]) => [status, code]));
    await t.deps.db.membership.update({ where: { id: membership.id }, data: { status: 'paused_for_payment' } });
    const paused = await useBenefit(membership.id, coffee, { quantity: 1 });
    expect([paused.status, paused.body.error, paused.body.detail]).toEqual([
      409,
      'membership_not_active',
      { status: 'paused_for_payment' },
    ]);
    expect(await t.deps.db.membershipUsage.count({ where: { membershipId: membership.id } })).toBe(0);
    expect(await events('membership.benefit_used', membership.id)).toHaveLength(0);
  });
});

describe('guest passes used at the desk', () => {
  it('when staff admit guests, then the passes are consumed and membership.guest_pass_used is recorded once; passes reserved online count too', async () => {
    const { plan, membership, token } = await member({ guestPassesPerPeriod: 3, visitsPerPeriod: null });
    // A booking reserving one pass: it counts in the period of its slot (this month, unless the
    // slot of tomorrow is in the next one).
    const slot = demo.experiences[0]!.slots[0]!;
    const booked = await createBooking(t, demo, {
      slotId: slot.id,
      guests: 2,
      body: { membership_token: token, guest_passes: 1 },
    });
    const bookingId = booked.booking_id;
    const remainingBefore = slot.starts_at.slice(0, 7) === thisMonth() ? 2 : 3;
    const res = await useGuestPasses(membership.id, { guest_count: 2, booking_id: bookingId });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      kind: 'guest_pass',
      status: 'consumed',
      quantity: 2,
      remaining: remainingBefore - 2,
      booking_id: bookingId,
    });
    const used = await events('membership.guest_pass_used', membership.id);
    expect(used).toHaveLength(1);
    expect(used[0]!.data).toMatchObject({
      entity_type: 'membership',
      membership_id: membership.id,
      plan_id: plan.id,
      guest_count: 2,
      remaining_guest_passes: remainingBefore - 2,
      booking_id: bookingId,
      period_key: thisMonth(),
    });
    const over = await useGuestPasses(membership.id, { guest_count: remainingBefore - 1 });
    expect([over.status, over.body.error]).toEqual([409, 'allowance_exhausted']);
    expect(await events('membership.guest_pass_used', membership.id)).toHaveLength(1);
  });

  it('when two tills admit the last guest at once, then one is admitted; a foreign membership or booking is 404', async () => {
    const { membership } = await member({ guestPassesPerPeriod: 1 });
    const answers = await Promise.all([1, 2].map(() => useGuestPasses(membership.id, { guest_count: 1 })));
    expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
    expect(await events('membership.guest_pass_used', membership.id)).toHaveLength(1);

    const fresh = await member();
    const foreignBooking = await createBooking(t, other, { guests: 1 });
    const foreignRef = await useGuestPasses(fresh.membership.id, {
      guest_count: 1,
      booking_id: foreignBooking.booking_id,
    });
    expect([foreignRef.status, foreignRef.body.error]).toEqual([404, 'booking_not_found']);
    const foreignMember = await useGuestPasses(fresh.membership.id, { guest_count: 1 }, other);
    expect([foreignMember.status, foreignMember.body.error]).toEqual([404, 'membership_not_found']);
    expect(await events('membership.guest_pass_used', fresh.membership.id)).toHaveLength(0);
  });
});

describe('the member discount on a retail order at the till', () => {
  const open = (body: object) =>
    request(t.app)
      .post('/api/pos/orders')
      .set(staff())
      .send({ shift_id: shiftId, currency: 'USD', ...body });
  const lines = (walletId?: string) => [
    { type: 'product', description: 'T-shirt', quantity: 2, unit_price_cents: 1499 },
    ...(walletId ? [{ type: 'wallet_load', wallet_id: walletId, amount_cents: 2000 }] : []),
  ];

  it('when an order names a member, then the product lines are discounted, and settling records the use and membership.discount_used (order) once', async () => {
    const { plan, membership, token } = await member({ memberDiscountPercent: 15 });
    const customer = await t.deps.db.customer.create({
      data: { tenantId: demo.tenant.id, email: `till-${membership.id}@example.com`, firstName: 'Pat' },
    });
    const wallet = await request(t.app)
      .post('/api/v1/wallets')
      .set(staff())
      .send({ customer_id: customer.id, currency: 'USD' });
    const opened = await open({ lines: lines(wallet.body.wallet_id), membership_token: token });
    expect(opened.status).toBe(201);
    // 15 % of 2998 is 449.7: 449 off the T-shirts, nothing off the wallet load.
    expect(opened.body).toMatchObject({
      discount_cents: 449,
      membership_id: membership.id,
      total_cents: 2998 - 449 + 2000,
    });
    expect(await events('membership.discount_used', opened.body.order_id)).toHaveLength(0);

    const orderId = opened.body.order_id as string;
    await request(t.app)
      .post(`/api/pos/orders/${orderId}/tenders`)
      .set(staff())
      .send({ type: 'cash', amount_cents: 4549 })
      .expect(201);
    const settled = await request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(staff()).send({});
    expect(settled.status).toBe(200);
    expect(settled.body).toMatchObject({ status: 'confirmed', paid_cents: 4549, discount_cents: 449 });
    const used = await events('membership.discount_used', orderId);
    expect(used).toHaveLength(1);
    expect(used[0]!.data).toMatchObject({
      entity_type: 'order',
      membership_id: membership.id,
      plan_id: plan.id,
      booking_id: null,
      order_id: orderId,
      discount_percent: 15,
      discount_cents: 449,
      currency: 'USD',
    });
    const usages = await t.deps.db.membershipUsage.findMany({ where: { membershipId: membership.id } });
    expect(usages.map((u) => [u.kind, u.status, u.orderId, u.amountCents])).toEqual([
      ['discount', 'consumed', orderId, 449],
    ]);
    const again = await request(t.app).post(`/api/pos/orders/${orderId}/settle`).set(staff()).send({});
    expect(again.body.error).toBe('order_not_open');
    expect(await events('membership.discount_used', orderId)).toHaveLength(1);
  });

  it('when the order is voided, then no use and no event are recorded', async () => {
    const { membership, token } = await member();
    const opened = await open({ lines: lines(), membership_token: token });
    expect(opened.body.discount_cents).toBe(299);
    await request(t.app).post(`/api/pos/orders/${opened.body.order_id}/void`).set(staff()).expect(200);
    expect(await events('membership.discount_used', opened.body.order_id)).toHaveLength(0);
    expect(await t.deps.db.membershipUsage.count({ where: { membershipId: membership.id } })).toBe(0);
  });

  it('when the plan does not discount retail, the token is bad or the membership not in use, then the order is refused with its code', async () => {
    const noRetail = await member();
    await t.deps.db.membershipPlan.update({ where: { id: noRetail.plan.id }, data: { discountOnRetail: false } });
    const noDiscount = await member({ memberDiscountPercent: 0 });
    const ended = await member();
    await t.deps.db.membership.update({ where: { id: ended.membership.id }, data: { status: 'ended' } });
    const foreign = await member({}, other);
    const answers = [
      await open({ lines: lines(), membership_token: noRetail.token }),
      await open({ lines: lines(), membership_token: noDiscount.token }),
      await open({ lines: lines(), membership_token: ended.token }),
      await open({ lines: lines(), membership_token: foreign.token }),
      await open({ lines: lines(), membership_token: 'not-a-token' }),
    ];
    expect(answers.map((res) => [res.status, res.body.error])).toEqual([
      [409, 'discount_not_applicable'],
      [409, 'discount_not_applicable'],
      [409, 'membership_not_active'],
      [400, 'member_token_invalid'],
      [400, 'member_token_invalid'],
    ]);
  });
});

describe('a membership that starts later', () => {
  it('when an imported membership is active but starts next week, then benefits, guest passes and the retail discount are 409 membership_not_active with its start, and nothing is used', async () => {
    const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { currency: 'USD', guestPassesPerPeriod: 5 });
    const startsAt = new Date(Date.now() + 7 * 86_400_000);
    const membership = await seedMembership(t.deps.db, plan, { startsAt });
    const tokens = await request(t.app).post(`/api/v1/memberships/${membership.id}/tokens`).set(staff());
    const refused = [
      await useBenefit(membership.id, plan.benefits[0]!.id, { quantity: 1 }),
      await useGuestPasses(membership.id, { guest_count: 1 }),
      await request(t.app)
        .post('/api/pos/orders')
        .set(staff())
        .send({
          shift_id: shiftId,
          currency: 'USD',
          lines: [{ type: 'product', description: 'T-shirt', quantity: 1, unit_price_cents: 1000 }],
          membership_token: tokens.body.member_token,
        }),
    ];
    expect(refused.map((res) => [res.status, res.body.error, res.body.detail])).toEqual(
      Array(3).fill([409, 'membership_not_active', { status: 'active', starts_at: startsAt.toISOString() }]),
    );
    expect(await t.deps.db.membershipUsage.count({ where: { membershipId: membership.id } })).toBe(0);
    expect(await t.deps.db.order.count({ where: { membershipId: membership.id } })).toBe(0);
    expect(await events('membership.benefit_used', membership.id)).toHaveLength(0);
    expect(await events('membership.guest_pass_used', membership.id)).toHaveLength(0);
  });
});

describe('a plan that requires a photo of the holder', () => {
  const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('png pixels')]);
  const capturePhoto = (membershipId: string) =>
    request(t.app)
      .put(`/api/v1/memberships/${membershipId}/holder-photo`)
      .set(staff())
      .set('Content-Type', 'image/png')
      .send(PNG);
  const openRetail = (token: string) =>
    request(t.app)
      .post('/api/pos/orders')
      .set(staff())
      .send({
        shift_id: shiftId,
        currency: 'USD',
        lines: [{ type: 'product', description: 'T-shirt', quantity: 1, unit_price_cents: 1000 }],
        membership_token: token,
      });

  it('when the holder has no photo yet, then benefits, guest passes and the retail discount are 409 holder_photo_required with nothing used; once it is captured they are accepted; a holder change asks for a new one', async () => {
    const { plan, membership, token } = await member({
      requiresPhoto: true,
      transferable: true,
      guestPassesPerPeriod: 5,
    });
    const coffee = plan.benefits[0]!;
    const refused = [
      await useBenefit(membership.id, coffee.id, { quantity: 1 }),
      await useGuestPasses(membership.id, { guest_count: 1 }),
      await openRetail(token),
    ];
    expect(refused.map((res) => [res.status, res.body.error, res.body.detail])).toEqual(
      Array(3).fill([409, 'holder_photo_required', { membership_id: membership.id }]),
    );
    expect(await t.deps.db.membershipUsage.count({ where: { membershipId: membership.id } })).toBe(0);
    expect(await t.deps.db.order.count({ where: { membershipId: membership.id } })).toBe(0);
    expect(await events('membership.benefit_used', membership.id)).toHaveLength(0);
    expect(await events('membership.guest_pass_used', membership.id)).toHaveLength(0);

    expect((await capturePhoto(membership.id)).status).toBe(200);
    const accepted = [
      await useBenefit(membership.id, coffee.id, { quantity: 1 }),
      await useGuestPasses(membership.id, { guest_count: 1 }),
      await openRetail(token),
    ];
    expect(accepted.map((res) => res.status)).toEqual([201, 201, 201]);
    expect(accepted[2]!.body).toMatchObject({ membership_id: membership.id, discount_cents: 100 });
    expect(await events('membership.benefit_used', membership.id)).toHaveLength(1);
    expect(await events('membership.guest_pass_used', membership.id)).toHaveLength(1);

    // A new holder: the photo is cleared, and the membership waits for theirs.
    const changed = await request(t.app)
      .post(`/api/v1/memberships/${membership.id}/holder`)
      .set({ Authorization: `Bearer ${demo.api_keys.manager}` })
      .send({ customer: { email: `next-${membership.id}@example.com`, first_name: 'Noa' } });
    expect(changed.status).toBe(200);
    const again = await useBenefit(membership.id, coffee.id, { quantity: 1 });
    expect([again.status, again.body.error]).toEqual([409, 'holder_photo_required']);
    expect(await events('membership.benefit_used', membership.id)).toHaveLength(1);
  });

  it('when the plan does not require a photo, then a membership without one is used as before', async () => {
    const { plan, membership } = await member({ requiresPhoto: false });
    const res = await useBenefit(membership.id, plan.benefits[0]!.id, { quantity: 1 });
    expect(res.status).toBe(201);
  });
});
