import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  bookingBody,
  clientIp,
  createTestApp,
  placeHold,
  type RedisServer,
  seedTenant,
  startRedisServer,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';
import { MARGIN_MS, expectBounded503s, timedAll } from './support/fault-figures';

/** The longest pause between reconnect attempts of the API's Redis connections. */
const RECONNECT_BACKOFF_MS = 500;
/** How long the API may take to serve again once Redis is back: a reconnect back-off and then some. */
const RECOVERY_WITHIN_MS = 3_000;

// A Redis of this file's own, without persistence, killed and started again empty on the same
// port: what a Redis without AOF does after a crash. PostgreSQL is the real one.
describe('Redis restarting empty', () => {
  let redis: RedisServer;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    redis = await startRedisServer();
    t = createTestApp({ REDIS_URL: redis.url, RATE_LIMIT_HOLDS_PER_MINUTE: '3' });
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
    await redis?.kill();
  });

  // The escape room: capacity 20, parties of 2 to 8, no waiver.
  const experience = () => demo.experiences[1]!;
  const slot = () => experience().slots[0]!;
  const hold = (ip: string, seats = 2, key?: string) => {
    const req = request(t.app).post('/api/bookings/hold').set('X-Forwarded-For', ip);
    return (key ? req.set('Idempotency-Key', key) : req).send({
      slot_id: slot().id,
      experience_id: experience().id,
      seats,
    });
  };
  const book = (ip: string, body: object, key?: string) => {
    const req = request(t.app).post('/api/bookings').set('X-Forwarded-For', ip);
    return (key ? req.set('Idempotency-Key', key) : req).send(body);
  };
  /** The widget's seats_remaining; it lists a slot only while the smallest party fits, so 0 when not listed. */
  async function seatsRemaining(): Promise<number> {
    const res = await request(t.app)
      .get('/api/widget/experience')
      .query({ tenant: demo.tenant.slug, experience: experience().slug });
    const listed = res.body.slots.find((candidate: { id: string }) => candidate.id === slot().id);
    return listed?.seats_remaining ?? 0;
  }

  it('when Redis restarts empty, then holds, rate-limit counters and idempotency records are gone, the API serves again without a restart, and no seat is oversold', async () => {
    const capacity = slot().capacity;
    // Before: a held booking (its 2 seats kept by its hold), booked with an Idempotency-Key and replayed.
    const booker = clientIp();
    const bookingKey = randomUUID();
    const heldHoldId = await placeHold(t, clientIp(), experience(), slot().id, 2);
    const bookingRequest = bookingBody(demo, experience(), slot().id, heldHoldId, 2);
    const booked = await book(booker, bookingRequest, bookingKey);
    expect([booked.status, booked.body.status]).toEqual([201, 'held']);
    expect((await book(booker, bookingRequest, bookingKey)).headers['idempotent-replayed']).toBe('true');
    // A hold not booked yet, a hold placed with an Idempotency-Key, and a client at its rate limit.
    const openHoldId = await placeHold(t, clientIp(), experience(), slot().id, 2);
    const [holdKey, keyHolder] = [randomUUID(), clientIp()];
    const keyedHold = await hold(keyHolder, 2, holdKey);
    const limited = clientIp();
    for (let i = 0; i < 3; i += 1) expect((await hold(limited)).status).toBe(200);
    expect((await hold(limited)).status).toBe(429);
    expect(await seatsRemaining()).toBe(capacity - 2 * 6);

    // Down: every request that needs Redis is refused at once.
    await redis.kill();
    const down = await timedAll(6, (i) => (i % 2 === 0 ? hold(clientIp()) : book(clientIp(), bookingRequest)));
    expectBounded503s(down, RECONNECT_BACKOFF_MS + MARGIN_MS);

    // Back, empty: the API reconnects by itself.
    await redis.start();
    const recoveringIp = clientIp();
    await waitUntil(async () => (await hold(recoveringIp)).status === 200, {
      timeoutMs: RECOVERY_WITHIN_MS,
      what: 'a hold to succeed on the restarted Redis',
    });

    // Holds are gone: booking the one placed before is 404.
    const lostHold = await book(clientIp(), bookingBody(demo, experience(), slot().id, openHoldId, 2));
    expect([lostHold.status, lostHold.body.error]).toEqual([404, 'hold_not_found']);
    // Rate-limit counters start again.
    expect((await hold(limited)).status).toBe(200);
    // Idempotency records are gone: a retry runs again. A hold's id comes from its key, so it is
    // the same hold, placed anew; a booking's retry finds the committed booking in PostgreSQL.
    const keyedAgain = await hold(keyHolder, 2, holdKey);
    expect([keyedAgain.status, keyedAgain.body.hold_id, keyedAgain.headers['idempotent-replayed']]).toEqual([
      200,
      keyedHold.body.hold_id,
      undefined,
    ]);
    const bookedAgain = await book(booker, bookingRequest, bookingKey);
    expect([bookedAgain.status, bookedAgain.body.booking_id]).toEqual([201, booked.body.booking_id]);

    // The held booking's seats were kept by its hold only: they are for sale again.
    const heldAfter = 3 * 2; // the recovering client's hold, the limited client's, the keyed one
    expect(await seatsRemaining()).toBe(capacity - heldAfter);
    // Sold, paid in full by gift card and confirmed at once.
    for (const seats of [8, 6]) {
      const ip = clientIp();
      const holdId = await placeHold(t, ip, experience(), slot().id, seats);
      const sold = await book(ip, {
        ...bookingBody(demo, experience(), slot().id, holdId, seats),
        gift_card_code: demo.gift_cards[0]!.code,
      });
      expect([sold.status, sold.body.status]).toEqual([201, 'confirmed']);
    }
    expect(await seatsRemaining()).toBe(0);
    // The held booking can no longer be paid for: its seats are checked again and refused.
    const shift = await request(t.app)
      .post('/api/pos/shifts/open')
      .set('Authorization', bearer(demo.api_keys.staff))
      .send({ starting_cash_cents: 10_000 });
    const paid = await request(t.app)
      .post(`/api/pos/shifts/${shift.body.shift_id}/cash-payments`)
      .set('Authorization', bearer(demo.api_keys.staff))
      .send({ booking_id: booked.body.booking_id, amount_cents: booked.body.total_cents });
    expect([paid.status, paid.body.error]).toEqual([409, 'capacity_exceeded']);
    const stored = await t.deps.db.slot.findUniqueOrThrow({ where: { id: slot().id } });
    expect(stored.seatsBooked).toBe(14);
    expect(stored.seatsBooked).toBeLessThanOrEqual(capacity);
  });
});
