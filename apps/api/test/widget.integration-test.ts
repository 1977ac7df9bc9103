import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Client } from 'pg';
import type { DemoTenant } from '@booking/db';
import {
  clientIp,
  createBooking,
  createTestApp,
  kayak,
  placeHold,
  seedTenant,
  waitUntil,
  type TestApp,
} from '@booking/test-kit';

describe('GET /api/widget/experience', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  const get = (tenant: string, experience: string) =>
    request(t.app).get('/api/widget/experience').query({ tenant, experience });

  it('when the experience exists, then it returns the spec fields and the slots of the next 14 days only', async () => {
    const { experience } = kayak(demo);
    const res = await get(demo.tenant.slug, experience.slug);

    expect(res.status).toBe(200);
    expect(res.body.experience).toEqual({
      id: experience.id,
      name: 'Harbour Kayak Tour',
      slug: experience.slug,
      description: expect.any(String),
      currency: 'USD',
      base_price_cents: 4500,
      min_party_size: 1,
      max_party_size: 12,
      duration_minutes: 120,
      requires_waiver: true,
    });
    const inWindow = experience.slots.filter((slot) => {
      const at = Date.parse(slot.starts_at);
      return at > Date.now() && at <= Date.now() + 14 * 24 * 3600 * 1000;
    });
    expect(res.body.slots.map((slot: { id: string }) => slot.id)).toEqual(inWindow.map((slot) => slot.id));
    expect(res.body.slots).toHaveLength(6);
    for (const slot of res.body.slots) {
      expect(Object.keys(slot).sort()).toEqual([
        'capacity',
        'ends_at',
        'id',
        'price_cents',
        'seats_remaining',
        'starts_at',
      ]);
      expect(slot.seats_remaining).toBe(24);
    }
    expect(res.body.slots[2].price_cents).toBe(6750);
    expect(res.body.slots[0].price_cents).toBeNull();
  });

  it('when seats are held and booked, then seats_remaining counts both', async () => {
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    await placeHold(t, ip, experience, slot.id, 5);
    await createBooking(t, demo, { experience, slotId: slot.id, ip, seats: 4, guests: 3 });

    const res = await get(demo.tenant.slug, experience.slug);
    const listed = res.body.slots.find((s: { id: string }) => s.id === slot.id);
    // 24 - 5 (live hold) - 3 (held booking); the booking's unused held seat went back.
    expect(listed.seats_remaining).toBe(16);
  });

  it('when a slot cannot take the smallest party, then it is not listed', async () => {
    const escape = demo.experiences[1]!; // min party 2, capacity 20
    const slot = escape.slots[1]!;
    const ip = clientIp();
    for (const seats of [8, 8, 3]) await placeHold(t, ip, escape, slot.id, seats);

    const res = await get(demo.tenant.slug, escape.slug);
    expect(res.status).toBe(200);
    expect(res.body.slots.map((s: { id: string }) => s.id)).not.toContain(slot.id);
    expect(res.body.slots).toHaveLength(5);
  });

  it('when the tenant or experience is unknown or unpublished, then it is 404 with the Error shape', async () => {
    const { experience } = kayak(demo);
    await get('no-such-tenant', experience.slug).expect(404, { error: 'experience_not_found' });
    await get(demo.tenant.slug, 'no-such-experience').expect(404, { error: 'experience_not_found' });

    const other = await seedTenant(t.deps);
    await t.deps.db.experience.update({ where: { id: other.experiences[0]!.id }, data: { published: false } });
    await get(other.tenant.slug, other.experiences[0]!.slug).expect(404, { error: 'experience_not_found' });
    await t.deps.db.tenant.update({ where: { id: other.tenant.id }, data: { published: false } });
    await get(other.tenant.slug, other.experiences[1]!.slug).expect(404, { error: 'experience_not_found' });
  });

  it('when a slot starts and ends off the second, then its times are given to the millisecond', async () => {
    const other = await seedTenant(t.deps);
    const experience = other.experiences[0]!;
    const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 4 * 24 * 3600 * 1000 + 123);
    const endsAt = new Date(startsAt.getTime() + 2 * 3600 * 1000 + 456);
    const slot = await t.deps.db.slot.create({
      data: { tenantId: other.tenant.id, experienceId: experience.id, startsAt, endsAt, capacity: 7 },
    });

    const res = await get(other.tenant.slug, experience.slug);
    expect(res.status).toBe(200);
    expect(res.body.slots.find((s: { id: string }) => s.id === slot.id)).toEqual({
      id: slot.id,
      starts_at: startsAt.toISOString(),
      ends_at: endsAt.toISOString(),
      capacity: 7,
      seats_remaining: 7,
      price_cents: null,
    });
    // Listed in order of start, between the seeded slots of days 3 and 5.
    const ids = res.body.slots.map((s: { id: string }) => s.id);
    expect(ids.indexOf(slot.id)).toBe(ids.indexOf(experience.slots[2]!.id) + 1);
  });

  it('when a query parameter is missing, then it is 400 invalid_query', async () => {
    const res = await request(t.app).get('/api/widget/experience').query({ tenant: demo.tenant.slug });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_query');
    expect(res.body.detail).toEqual([expect.objectContaining({ field: '/experience' })]);
  });
});

describe('an API whose only PostgreSQL work so far is widget reads', () => {
  it('when PostgreSQL ends its idle connections, then the process carries on and answers the next read, and closing it ends the pool', async () => {
    const seeding = createTestApp();
    const demo = await seedTenant(seeding.deps);
    await seeding.close();
    // Its connections carry a name of their own, so only they are ended.
    const name = `widget-only-${randomUUID()}`;
    const url = new URL(process.env.DATABASE_URL!);
    url.searchParams.set('application_name', name);
    const t = createTestApp({ DATABASE_URL: url.toString() });
    const read = () =>
      request(t.app)
        .get('/api/widget/experience')
        .query({ tenant: demo.tenant.slug, experience: demo.experiences[0]!.slug });
    try {
      expect((await read()).status).toBe(200);
      expect(t.deps.pool.idleCount).toBeGreaterThan(0);

      const admin = new Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      try {
        const ended = await admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
          [name],
        );
        expect(ended.rowCount).toBeGreaterThan(0);
      } finally {
        await admin.end();
      }
      // The pool drops a connection when its 'error' comes; with no one listening it would throw.
      await waitUntil(() => t.deps.pool.totalCount === 0, { what: 'the ended connections to leave the pool' });

      expect((await read()).status).toBe(200);
    } finally {
      await t.close();
    }
    expect(t.deps.pool.ended).toBe(true);
  });
});
