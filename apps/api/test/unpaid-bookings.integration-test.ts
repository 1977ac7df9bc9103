import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { expireHeldBookings } from '../src/bookings/expire-held-bookings';
import { createIsolatedDatabase } from '../../../test/support/isolated-database';
import { bookingBody, placeHold } from './support/booking-flow';
import { clientIp, createTestApp, kayak, seedTenant, type TestApp } from './support/test-app';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The sweep covers every tenant, so this file has a database of its own.
describe('held bookings nobody pays for', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    t = createTestApp({ ...isolated.env, HOLD_TTL_SECONDS: '1' });
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t.close();
    await isolated.drop();
  });

  async function book(slotIndex: number, extra: object = {}) {
    const { experience } = kayak(demo);
    const slotId = experience.slots[slotIndex]!.id;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slotId, 1);
    const res = await request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', ip)
      .send({ ...bookingBody(demo, experience, slotId, holdId, 1), ...extra });
    expect(res.status).toBe(201);
    return res.body as { booking_id: string; status: string };
  }

  it('when a held booking outlives its hold by the grace period, then it is cancelled, its gift card part returned and booking.cancelled recorded once', async () => {
    const small = demo.gift_cards.find((card) => card.balance_cents === 500)!;
    const card = () =>
      t.deps.db.giftCard.findFirstOrThrow({ where: { tenantId: demo.tenant.id, codeLast4: small.code.slice(-4) } });
    const unpaid = await book(1, { gift_card_code: small.code });
    const paid = await book(2, { gift_card_code: demo.gift_cards[0]!.code });
    expect([unpaid.status, paid.status]).toEqual(['held', 'confirmed']);
    expect((await card()).balanceCents).toBe(0);
    await sleep(1200);

    const first = await expireHeldBookings(t.deps, 0);
    const second = await expireHeldBookings(t.deps, 0);

    expect(first).toBe(1);
    expect(second).toBe(0);
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: unpaid.booking_id } });
    expect(booking.status).toBe('cancelled');
    expect((await card()).balanceCents).toBe(500);
    const events = await t.deps.db.event.findMany({
      where: { entityId: unpaid.booking_id, name: 'booking.cancelled' },
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ booking_id: unpaid.booking_id, cancelled_by_user_id: null });
    expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: paid.booking_id } })).status).toBe('confirmed');
  });

  it('when the grace period has not passed, then the held booking is left alone', async () => {
    const held = await book(3);
    await sleep(1200);

    await expireHeldBookings(t.deps, 3600);

    expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: held.booking_id } })).status).toBe('held');
  });
});
