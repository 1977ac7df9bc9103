import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { bearer, createTestApp, freePort, heldBooking, seedTenant, type TestApp } from '@booking/test-kit';

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
    const { booking_id: bookingId, holdId } = await heldBooking(t, demo);

    const res = await request(noRedis.app)
      .post(`/api/bookings/${bookingId}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager));

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ booking_id: bookingId, status: 'cancelled' });
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } });
    expect(booking.status).toBe('cancelled');
    expect(await t.deps.db.event.count({ where: { entityId: booking.id, name: 'booking.cancelled' } })).toBe(1);
    // The hold is still in Redis (nothing could remove it), and goes when it expires.
    expect((await t.deps.holds.read(holdId)).hold).not.toBeNull();
  });
});
