import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { freePort } from '../../../test/support/service-process';
import { bearer } from './support/operators';
import { bookingBody, placeHold } from './support/booking-flow';
import { clientIp, createTestApp, kayak, seedTenant, type TestApp } from './support/test-app';

// A change that committed in PostgreSQL is the truth even when the Redis tidy-up after it fails:
// the answer says what was committed, and the hold stops counting when it expires.
describe('a change committed while Redis is away', () => {
  let t: TestApp;
  let noRedis: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    // Redis on a port nothing listens on refuses every connection.
    noRedis = createTestApp({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await noRedis.close();
    await t.close();
  });

  it('when a held booking is cancelled and its hold cannot be released, then the answer is 200 cancelled, as committed', async () => {
    const { experience, slot } = kayak(demo);
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 2);
    const booked = await request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', ip)
      .send(bookingBody(demo, experience, slot.id, holdId, 2));
    expect(booked.status).toBe(201);

    const res = await request(noRedis.app)
      .post(`/api/bookings/${booked.body.booking_id}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager));

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ booking_id: booked.body.booking_id, status: 'cancelled' });
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.body.booking_id } });
    expect(booking.status).toBe('cancelled');
    expect(await t.deps.db.event.count({ where: { entityId: booking.id, name: 'booking.cancelled' } })).toBe(1);
    // The hold is still in Redis (nothing could remove it), and goes when it expires.
    expect(await t.deps.holds.get(holdId)).not.toBeNull();
  });
});
