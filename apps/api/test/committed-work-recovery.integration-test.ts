import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  bookingBody,
  clientIp,
  createTestApp,
  kayak,
  placeHold,
  seedTenant,
  sleep,
  type TestApp,
} from '@booking/test-kit';

// The stored answer of an Idempotency-Key lives in Redis; the work lives in PostgreSQL. Here the
// stored answer expires after one second, which stands for every way it can be lost after the
// work committed (the process killed in between, Redis restarted empty). The retry must still
// get the committed work's answer, never do the work twice, and never hand it to someone else.
describe('a retry whose first run committed but whose answer was lost', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp({ IDEMPOTENCY_TTL_SECONDS: '1' });
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  /** Lets IDEMPOTENCY_TTL_SECONDS=1 run out: Redis drops the stored answer on its own clock, so time must pass. */
  const outliveStoredAnswer = () => sleep(1200);

  const postBooking = (ip: string, body: object, key: string) =>
    request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).set('Idempotency-Key', key).send(body);

  async function bookWithKey(slotIndex: number, extra: object = {}) {
    const { experience } = kayak(demo);
    const slotId = experience.slots[slotIndex]!.id;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slotId, 2);
    const body = { ...bookingBody(demo, experience, slotId, holdId, 2), ...extra };
    const key = randomUUID();
    const first = await postBooking(ip, body, key);
    expect(first.status).toBe(201);
    return { ip, body, key, first, holdId };
  }

  it('when a held booking is retried after its stored answer is gone, then it gets that booking back, marked replayed', async () => {
    const { ip, body, key, first, holdId } = await bookWithKey(1);
    await outliveStoredAnswer();

    const retry = await postBooking(ip, body, key);

    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toMatchObject({
      booking_id: first.body.booking_id,
      status: 'held',
      total_cents: first.body.total_cents,
      payment_complete: false,
    });
    expect(typeof retry.body.booking_token).toBe('string');
    expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(1);
    // The fresh booking token pays that booking.
    const pay = await request(t.app)
      .post(`/api/embed/bookings/${first.body.booking_id}/payment-intent`)
      .set('X-Booking-Token', retry.body.booking_token);
    expect(pay.status).not.toBe(401);
  });

  it('when a booking a gift card confirmed is retried, then it is answered confirmed and the card is charged once', async () => {
    const card = demo.gift_cards.find((c) => c.balance_cents >= 100_000)!;
    const { ip, body, key, first } = await bookWithKey(2, { gift_card_code: card.code });
    expect(first.body.payment_complete).toBe(true);
    await outliveStoredAnswer();

    const retry = await postBooking(ip, body, key);

    expect(retry.status).toBe(201);
    expect(retry.body).toMatchObject({
      booking_id: first.body.booking_id,
      status: 'confirmed',
      payment_complete: true,
      gift_card_applied_cents: first.body.gift_card_applied_cents,
    });
    const payments = await t.deps.db.payment.findMany({ where: { bookingId: first.body.booking_id } });
    expect(payments).toHaveLength(1);
  });

  it('when a free booking (confirmed at once) is retried, then it is answered confirmed', async () => {
    const free = await seedTenant(t.deps);
    const escape = free.experiences[1]!;
    const slotId = escape.slots[0]!.id;
    await t.deps.db.experience.update({ where: { id: escape.id }, data: { basePriceCents: 0 } });
    await t.deps.db.slot.update({ where: { id: slotId }, data: { priceCents: null } });
    const ip = clientIp();
    const body = bookingBody(free, escape, slotId, await placeHold(t, ip, escape, slotId, 2), 2);
    const key = randomUUID();
    const first = await postBooking(ip, body, key);
    expect([first.status, first.body.status]).toEqual([201, 'confirmed']);
    await outliveStoredAnswer();

    const retry = await postBooking(ip, body, key);

    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toMatchObject({
      booking_id: first.body.booking_id,
      status: 'confirmed',
      payment_complete: true,
    });
  });

  it('when the same hold is booked with another key or another body, then it is still not found', async () => {
    const { ip, body, key } = await bookWithKey(3);
    await outliveStoredAnswer();

    const otherKey = await postBooking(ip, body, randomUUID());
    const otherBody = await postBooking(ip, { ...body, notes: 'changed' }, key);
    const otherClient = await postBooking(clientIp(), body, key);

    expect([otherKey.status, otherBody.status, otherClient.status]).toEqual([404, 404, 404]);
    expect(otherKey.body.error).toBe('hold_not_found');
  });

  it('when the booking was transferred to someone else meanwhile, then the old request no longer gets its tokens', async () => {
    const card = demo.gift_cards.find((c) => c.balance_cents >= 100_000)!;
    const { ip, body, key, first } = await bookWithKey(4, { gift_card_code: card.code });
    const moved = await request(t.app)
      .post(`/api/bookings/${first.body.booking_id}/transfer`)
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ customer: { email: `new-owner-${randomUUID()}@example.com`, first_name: 'Nia' }, reason: 'gift' });
    expect(moved.status).toBe(200);
    await outliveStoredAnswer();

    const retry = await postBooking(ip, body, key);

    expect(retry.status).toBe(404);
    expect(retry.body).toEqual({ error: 'hold_not_found' });
  });
});
