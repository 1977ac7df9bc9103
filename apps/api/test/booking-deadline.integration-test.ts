import request from 'supertest';
import pg from 'pg';
import type { DemoTenant } from '@booking/db';
import { bookingBody, clientIp, createTestApp, kayak, placeHold, seedTenant, type TestApp } from '@booking/test-kit';

// A request answered 503 at its deadline must not commit afterwards (request-deadline.ts), on
// either booking path: the plain booking's one statement and the gift card's transaction.
describe('a booking whose wait for its slot outlives the request deadline', () => {
  let t: TestApp;
  let demo: DemoTenant;
  beforeAll(async () => {
    t = createTestApp({ REQUEST_TIMEOUT_MS: '1500', DB_CONNECT_TIMEOUT_MS: '500' });
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  it.each([
    ['a plain booking (one statement)', false],
    ['a gift card booking (transaction)', true],
  ])(
    'when %s waits past its deadline, then it is 503 and nothing commits once the lock is free',
    async (_path, giftCard) => {
      const { experience } = kayak(demo);
      const slot = experience.slots[giftCard ? 1 : 0]!;
      const ip = clientIp();
      const holdId = await placeHold(t, ip, experience, slot.id, 2);
      const body = {
        ...bookingBody(demo, experience, slot.id, holdId, 2),
        ...(giftCard && { gift_card_code: demo.gift_cards[0]!.code }),
      };
      // Another session holds the slot row past the deadline, then lets go.
      const locker = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('SELECT 1 FROM slots WHERE id = $1 FOR UPDATE', [slot.id]);
        const answer = request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body);
        const released = new Promise((resolve) => setTimeout(resolve, 2_500)).then(() => locker.query('COMMIT'));
        const [res] = await Promise.all([answer, released]);
        expect(res.status).toBe(503);
      } finally {
        await locker.end();
      }
      // The booking's statement ran on as soon as the lock was free; whatever it did is done by the
      // time a statement queued behind the same lock returns.
      await t.deps.db.$queryRaw`SELECT 1 FROM slots WHERE id = ${slot.id}::uuid FOR UPDATE`;
      expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(0);
    },
  );
});
