import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { bookingBody, clientIp, createTestApp, holdExpired, kayak, seedTenant, type TestApp } from '@booking/test-kit';

describe('POST /api/bookings/hold', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  const hold = (ip: string, body: object) =>
    request(t.app).post('/api/bookings/hold').set('X-Forwarded-For', ip).send(body);

  it('when seats are free, then it holds them for HOLD_TTL_SECONDS and they count at once', async () => {
    const { experience, slot } = kayak(demo);
    const before = Date.now();
    const res = await hold(clientIp(), { slot_id: slot.id, experience_id: experience.id, seats: 4 });

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ hold_id: expect.stringMatching(/^[0-9a-f-]{36}$/), expires_at: expect.any(String) });
    const ttlMs = Date.parse(res.body.expires_at) - before;
    expect(ttlMs).toBeGreaterThan(599_000);
    expect(ttlMs).toBeLessThan(602_000);
    expect((await t.deps.holds.liveSeats([slot.id])).get(slot.id)).toBe(4);
  });

  it('when the slot cannot supply the seats, then it is 409 and nothing is held', async () => {
    const { experience } = kayak(demo);
    const slot = experience.slots[1]!;
    const ip = clientIp();
    await hold(ip, { slot_id: slot.id, experience_id: experience.id, seats: 12 }).expect(200);
    await hold(ip, { slot_id: slot.id, experience_id: experience.id, seats: 10 }).expect(200);

    const res = await hold(ip, { slot_id: slot.id, experience_id: experience.id, seats: 3 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('insufficient_capacity');
    expect((await t.deps.holds.liveSeats([slot.id])).get(slot.id)).toBe(22);
    await hold(ip, { slot_id: slot.id, experience_id: experience.id, seats: 2 }).expect(200);
  });

  it('when ids come in upper case, then they name the same slot, hold and addons: its seats are not held twice, and the hold books with its addons', async () => {
    const { experience } = kayak(demo);
    const slot = experience.slots[2]!;
    const ip = clientIp();
    const upper = { slot_id: slot.id.toUpperCase(), experience_id: experience.id.toUpperCase() };
    await hold(ip, { slot_id: slot.id, experience_id: experience.id, seats: 12 }).expect(200);
    const held = await hold(ip, { ...upper, seats: 12 });
    expect(held.status).toBe(200);

    const res = await hold(ip, { ...upper, seats: 1 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('insufficient_capacity');
    expect((await t.deps.holds.liveSeats([slot.id])).get(slot.id)).toBe(24);

    // Clients that print uuids in upper case send the hold's and the addons' that way too.
    const addons = experience.addons.map((addon) => ({ addon_id: addon.id.toUpperCase(), qty: 1 }));
    expect(addons.length).toBeGreaterThan(0);
    const booked = await request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', ip)
      .send({
        ...bookingBody(demo, experience, slot.id, String(held.body.hold_id).toUpperCase(), 2),
        ...upper,
        venue_id: demo.venue_id.toUpperCase(),
        addons,
      });
    expect(booked.status).toBe(201);
    const row = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: booked.body.booking_id },
      include: { addons: true },
    });
    expect(row.holdId).toBe(held.body.hold_id);
    expect(row.addons.map((addon) => addon.addonId).sort()).toEqual(experience.addons.map((addon) => addon.id).sort());
    // The hold is used, whichever case names it.
    expect((await t.deps.holds.read(String(held.body.hold_id))).hold?.bookingId).toBe(booked.body.booking_id);
  });

  it('when a hold expires, then its seats are free again and it no longer counts', async () => {
    const short = createTestApp({ HOLD_TTL_SECONDS: '1' });
    try {
      const other = await seedTenant(short.deps);
      const { experience, slot } = kayak(other);
      await short.deps.db.slot.update({ where: { id: slot.id }, data: { capacity: 5 } });
      const ip = clientIp();
      const first = await request(short.app)
        .post('/api/bookings/hold')
        .set('X-Forwarded-For', ip)
        .send({ slot_id: slot.id, experience_id: experience.id, seats: 5 });
      expect(first.status).toBe(200);
      await request(short.app)
        .post('/api/bookings/hold')
        .set('X-Forwarded-For', ip)
        .send({ slot_id: slot.id, experience_id: experience.id, seats: 1 })
        .expect(409);

      await holdExpired(short, Date.parse(first.body.expires_at as string));

      expect((await short.deps.holds.liveSeats([slot.id])).get(slot.id)).toBe(0);
      await request(short.app)
        .post('/api/bookings/hold')
        .set('X-Forwarded-For', ip)
        .send({ slot_id: slot.id, experience_id: experience.id, seats: 5 })
        .expect(200);
    } finally {
      await short.close();
    }
  });

  it('when the slot is unknown, then it is 404 slot_not_found', async () => {
    const { experience } = kayak(demo);
    const res = await hold(clientIp(), {
      slot_id: '00000000-0000-4000-8000-000000000000',
      experience_id: experience.id,
      seats: 1,
    });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'slot_not_found' });
  });

  it('when the slot belongs to another experience, then it is 400 experience_slot_mismatch', async () => {
    const { slot } = kayak(demo);
    const res = await hold(clientIp(), { slot_id: slot.id, experience_id: demo.experiences[1]!.id, seats: 2 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('experience_slot_mismatch');
  });

  it('when the party is outside the experience limits, then it is 400 invalid_guest_count', async () => {
    const escape = demo.experiences[1]!; // party 2..8
    const ip = clientIp();
    for (const seats of [1, 9]) {
      const res = await hold(ip, { slot_id: escape.slots[0]!.id, experience_id: escape.id, seats });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_guest_count', detail: { min_party_size: 2, max_party_size: 8 } });
    }
  });

  it('when the slot has started, then it is 409 slot_unavailable', async () => {
    const { experience } = kayak(demo);
    const past = experience.slots.find((slot) => Date.parse(slot.starts_at) < Date.now())!;
    const res = await hold(clientIp(), { slot_id: past.id, experience_id: experience.id, seats: 1 });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('slot_unavailable');
  });

  it('when the experience is unpublished, then its slots cannot be held', async () => {
    const other = await seedTenant(t.deps);
    const { experience, slot } = kayak(other);
    await t.deps.db.experience.update({ where: { id: experience.id }, data: { published: false } });
    const res = await hold(clientIp(), { slot_id: slot.id, experience_id: experience.id, seats: 1 });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('slot_not_found');
  });

  it('when the body is invalid, then it is 400 invalid_body naming each field', async () => {
    const res = await hold(clientIp(), { slot_id: 'nope', seats: 0 });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_body');
    expect(res.body.detail.map((problem: { field: string }) => problem.field).sort()).toEqual([
      '/experience_id',
      '/seats',
      '/slot_id',
    ]);
  });
});
