import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { verifyToken } from '@booking/signing';
import {
  bookingBody,
  clientIp,
  createTestApp,
  holdExpired,
  kayak,
  placeHold,
  seedTenant,
  type TestApp,
} from '@booking/test-kit';

describe('POST /api/bookings', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  const book = (ip: string, body: object) => request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body);

  it('when the hold is live, then it creates a held booking, consumes the hold and records booking.created', async () => {
    const { experience, peakSlot } = kayak(demo);
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, peakSlot.id, 3);
    const [dryBag, photos] = experience.addons;
    const body = {
      ...bookingBody(demo, experience, peakSlot.id, holdId, 3),
      notes: 'Celebrating a birthday',
      addons: [
        { addon_id: dryBag!.id, qty: 2 },
        { addon_id: photos!.id, qty: 1 },
      ],
    };

    const res = await book(ip, body);

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      booking_id: expect.any(String),
      booking_token: expect.any(String),
      waiver_url: expect.stringMatching(/^http:\/\/localhost:3000\/api\/waivers\/t1\./),
      status: 'held',
      // peak slot 6750 x 3 + dry bag 800 x 2 + photos 1500
      total_cents: 6750 * 3 + 800 * 2 + 1500,
      currency: 'USD',
      gift_card_applied_cents: 0,
      member_discount_cents: 0,
      payment_complete: false,
      manage_token: expect.stringMatching(/^t1\./),
    });
    const token = verifyToken(t.deps.config.tokenSigningSecret, 'booking', res.body.booking_token);
    expect(token.subject).toBe(res.body.booking_id);
    expect(token.expiresAt.getTime() - Date.now()).toBeGreaterThan(3590_000);

    const booking = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: res.body.booking_id },
      include: { addons: true, customer: true },
    });
    expect(booking).toMatchObject({
      status: 'held',
      guestCount: 3,
      holdId,
      unitPriceCents: 6750,
      addonsTotalCents: 3100,
      notes: 'Celebrating a birthday',
    });
    expect(booking.addons).toHaveLength(2);
    expect(booking.customer.email).toBe(body.customer.email);
    // A held booking keeps its seats through its hold until the hold expires or it is paid.
    expect((await t.deps.db.slot.findUniqueOrThrow({ where: { id: peakSlot.id } })).seatsBooked).toBe(0);
    expect((await t.deps.holds.liveSeats([peakSlot.id])).get(peakSlot.id)).toBe(3);
    expect(booking.holdExpiresAt.getTime()).toBeGreaterThan(Date.now() + 590_000);

    const events = await t.deps.db.event.findMany({ where: { entityId: booking.id } });
    expect(events).toHaveLength(1);
    expect(events[0]!.name).toBe('booking.created');
    expect(events[0]!.data).toEqual({
      event_id: events[0]!.id,
      schema_version: 2,
      entity_type: 'booking',
      entity_id: booking.id,
      booking_id: booking.id,
      experience_id: experience.id,
      venue_id: demo.venue_id,
      slot_id: peakSlot.id,
      customer_email: body.customer.email,
      guest_count: 3,
    });

    const again = await book(ip, body);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ error: 'hold_not_found' });
  });

  it('when the experience needs no waiver, then waiver_url is null and the base price applies', async () => {
    const escape = demo.experiences[1]!;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, escape, escape.slots[0]!.id, 4);
    const res = await book(ip, bookingBody(demo, escape, escape.slots[0]!.id, holdId, 4));
    expect(res.status).toBe(201);
    expect(res.body.waiver_url).toBeNull();
    expect(res.body.total_cents).toBe(2800 * 4);
  });

  it('when the experience is free, then the booking is confirmed at once with its seats booked, nothing to pay', async () => {
    const free = await seedTenant(t.deps);
    const escape = free.experiences[1]!;
    const slot = escape.slots[0]!;
    await t.deps.db.experience.update({ where: { id: escape.id }, data: { basePriceCents: 0 } });
    await t.deps.db.slot.update({ where: { id: slot.id }, data: { priceCents: null } });
    const ip = clientIp();
    const holdId = await placeHold(t, ip, escape, slot.id, 2);

    const res = await book(ip, bookingBody(free, escape, slot.id, holdId, 2));

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'confirmed', total_cents: 0, payment_complete: true });
    expect(await t.deps.db.booking.findUniqueOrThrow({ where: { id: res.body.booking_id } })).toMatchObject({
      status: 'confirmed',
      totalCents: 0,
    });
    expect((await t.deps.db.slot.findUniqueOrThrow({ where: { id: slot.id } })).seatsBooked).toBe(2);
    expect((await t.deps.holds.liveSeats([slot.id])).get(slot.id) ?? 0).toBe(0);
    const [confirmed] = await t.deps.db.event.findMany({
      where: { entityId: res.body.booking_id, name: 'booking.confirmed' },
    });
    expect(confirmed!.data).toMatchObject({ method: 'free', charge_amount_cents: 0, net_paid_cents: 0 });
  });

  it('when fewer guests are booked than held, then the extra seats go back to the slot', async () => {
    const { experience } = kayak(demo);
    const slot = experience.slots[3]!;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 6);
    await book(ip, bookingBody(demo, experience, slot.id, holdId, 2)).expect(201);
    expect((await t.deps.holds.liveSeats([slot.id])).get(slot.id)).toBe(2);
  });

  it('when the same email books twice, then the tenant has one customer with the latest details', async () => {
    const { experience } = kayak(demo);
    const slot = experience.slots[4]!;
    const ip = clientIp();
    const email = `Repeat-${Date.now()}@Example.com`;
    for (const firstName of ['Grace', 'Gracie']) {
      const holdId = await placeHold(t, ip, experience, slot.id, 1);
      const body = bookingBody(demo, experience, slot.id, holdId, 1);
      await book(ip, { ...body, customer: { email, first_name: firstName, phone: '+1 555 0100' } }).expect(201);
    }
    const customers = await t.deps.db.customer.findMany({
      where: { tenantId: demo.tenant.id, email: email.toLowerCase() },
    });
    expect(customers).toHaveLength(1);
    expect(customers[0]).toMatchObject({ firstName: 'Gracie', phone: '+1 555 0100' });
  });

  it('when the hold does not exist, then it is 404 hold_not_found', async () => {
    const { experience, slot } = kayak(demo);
    const res = await book(
      clientIp(),
      bookingBody(demo, experience, slot.id, '00000000-0000-4000-8000-000000000001', 1),
    );
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'hold_not_found' });
  });

  it('when slot, experience or venue do not match the hold, then it is 400 experience_slot_mismatch', async () => {
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 2);
    const body = bookingBody(demo, experience, slot.id, holdId, 2);
    for (const wrong of [
      { slot_id: experience.slots[1]!.id },
      { experience_id: demo.experiences[1]!.id },
      { venue_id: '00000000-0000-4000-8000-000000000002' },
    ]) {
      const res = await book(ip, { ...body, ...wrong });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('experience_slot_mismatch');
    }
  });

  it('when the guest count exceeds the held seats or the party size, then it is 400 invalid_guest_count', async () => {
    const ip = clientIp();
    const { experience, slot } = kayak(demo);
    const holdId = await placeHold(t, ip, experience, slot.id, 2);
    const tooMany = await book(ip, bookingBody(demo, experience, slot.id, holdId, 3));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toBe('invalid_guest_count');
    expect(tooMany.body.detail).toEqual({ min_party_size: 1, max_party_size: 12, seats_held: 2 });

    const escape = demo.experiences[1]!;
    const escapeHold = await placeHold(t, ip, escape, escape.slots[0]!.id, 2);
    const tooFew = await book(ip, bookingBody(demo, escape, escape.slots[0]!.id, escapeHold, 1));
    expect(tooFew.status).toBe(400);
    expect(tooFew.body.error).toBe('invalid_guest_count');
  });

  it("when an addon is unknown, then it is 400 addon_not_found; another experience's, retired or repeated addon is addon_invalid", async () => {
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 1);
    const body = bookingBody(demo, experience, slot.id, holdId, 1);
    const own = experience.addons[0]!.id;
    const foreign = demo.experiences[1]!.addons[0]!.id;

    const unknown = await book(ip, { ...body, addons: [{ addon_id: '00000000-0000-4000-8000-000000000003', qty: 1 }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      error: 'addon_not_found',
      detail: { addon_ids: ['00000000-0000-4000-8000-000000000003'] },
    });

    const other = await book(ip, { ...body, addons: [{ addon_id: foreign, qty: 1 }] });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('addon_invalid');

    const twice = await book(ip, {
      ...body,
      addons: [
        { addon_id: own, qty: 1 },
        { addon_id: own, qty: 2 },
      ],
    });
    expect(twice.body.error).toBe('addon_invalid');

    const otherTenant = await seedTenant(t.deps);
    const outsider = await book(clientIp(), {
      ...body,
      addons: [{ addon_id: otherTenant.experiences[0]!.addons[0]!.id, qty: 1 }],
    });
    expect(outsider.body.error).toBe('addon_not_found');

    await t.deps.db.addon.update({ where: { id: own }, data: { active: false } });
    const retired = await book(clientIp(), { ...body, addons: [{ addon_id: own, qty: 1 }] });
    await t.deps.db.addon.update({ where: { id: own }, data: { active: true } });
    expect(retired.body.error).toBe('addon_invalid');

    expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(0);
  });

  it('when the hold has expired, then it is 410 hold_expired', async () => {
    const short = createTestApp({ HOLD_TTL_SECONDS: '1' });
    try {
      const other = await seedTenant(short.deps);
      const { experience, slot } = kayak(other);
      const ip = clientIp();
      const holdId = await placeHold(short, ip, experience, slot.id, 2);
      await holdExpired(short, (await short.deps.holds.read(holdId)).hold!.expiresAt);
      const res = await request(short.app)
        .post('/api/bookings')
        .set('X-Forwarded-For', ip)
        .send(bookingBody(other, experience, slot.id, holdId, 2));
      expect(res.status).toBe(410);
      expect(res.body).toEqual({ error: 'hold_expired' });
    } finally {
      await short.close();
    }
  });

  it('when the seats of a live hold are no longer there, then it is 409 capacity_exceeded', async () => {
    // The hold is live but the slot cannot seat it any more: an operator lowered the capacity
    // after other holds filled the slot. Capacity is re-checked in the creating transaction.
    const { experience } = kayak(demo);
    const slot = experience.slots[5]!;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 4);
    await placeHold(t, ip, experience, slot.id, 10);
    await placeHold(t, ip, experience, slot.id, 10);
    await t.deps.db.slot.update({ where: { id: slot.id }, data: { capacity: 22 } });

    const res = await book(ip, bookingBody(demo, experience, slot.id, holdId, 4));
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('capacity_exceeded');
    expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(0);
  });
});
