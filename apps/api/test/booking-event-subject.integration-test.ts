import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import type { EventName } from '@booking/events';
import { expireHeldBookings } from '../src/bookings/expire-held-bookings';
import {
  bearer,
  confirmedBooking,
  createBooking,
  type CreatedBooking,
  createIsolatedDatabase,
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  kayak,
  payByCard,
  seedTenant,
  signedPaymentSucceededEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
} from '@booking/test-kit';

// Every booking event carries its subject: the booking, its experience, venue and slot, and the
// customer's email, whichever way the booking ended (cancel, expiry, reissue, refund). The
// expiry sweep covers every tenant, so this file has a database of its own.

describe('the subject of booking events', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let fake: FakeStripe;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    fake = await startFakeStripe();
    t = createTestApp({ ...isolated.env, ...stripeEnv(fake.url) });
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t.close();
    await stopFakeStripe(fake);
    await isolated.drop();
  });

  /** A one-guest booking of the kayak tour: held, or confirmed when the seed's big gift card pays it all. */
  const book = (slotIndex: number, options: { paidByGiftCard?: boolean } = {}) =>
    options.paidByGiftCard
      ? confirmedBooking(t, demo, { slotIndex, guests: 1 })
      : createBooking(t, demo, { slotIndex, guests: 1 });

  /** What booking.confirmed and booking.created carry about their booking. */
  const subjectOf = (booked: CreatedBooking) => ({
    booking_id: booked.booking_id,
    experience_id: kayak(demo).experience.id,
    venue_id: demo.venue_id,
    slot_id: booked.slotId,
    customer_email: booked.email,
  });

  const eventData = async (bookingId: string, name: EventName) => {
    const events = await t.deps.db.event.findMany({ where: { entityId: bookingId, name } });
    expect(events).toHaveLength(1);
    return events[0]!.data;
  };

  it('when a manager cancels a booking, then booking.cancelled carries the subject with customer_email', async () => {
    const booked = await book(0, { paidByGiftCard: true });

    const res = await request(t.app)
      .post(`/api/bookings/${booked.booking_id}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager));

    expect(res.status).toBe(200);
    expect(await eventData(booked.booking_id, 'booking.cancelled')).toMatchObject(subjectOf(booked));
  });

  it('when the expiry sweep cancels an unpaid booking, then booking.cancelled carries the subject', async () => {
    const booked = await book(1);
    await t.deps.db.booking.update({
      where: { id: booked.booking_id },
      data: { holdExpiresAt: new Date(Date.now() - 60_000) },
    });

    expect(await expireHeldBookings(t.deps, 30)).toBe(1);

    expect(await eventData(booked.booking_id, 'booking.cancelled')).toMatchObject({
      ...subjectOf(booked),
      reason: 'unpaid_hold_expired',
    });
  });

  it('when a manager reissues a paid booking as a gift card, then booking.reissued carries the subject', async () => {
    const booked = await book(2, { paidByGiftCard: true });

    const res = await request(t.app)
      .post(`/api/bookings/${booked.booking_id}/reissue-gift-card`)
      .set('Authorization', bearer(demo.api_keys.manager));

    expect(res.status).toBe(200);
    expect(await eventData(booked.booking_id, 'booking.reissued')).toMatchObject(subjectOf(booked));
  });

  it('when a card payment is refunded in full, then booking.refunded carries the subject', async () => {
    const booked = await book(3);
    await payByCard(t, fake, booked, booked.ip);

    const res = await request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: booked.booking_id });

    expect(res.status).toBe(201);
    expect(await eventData(booked.booking_id, 'booking.refunded')).toMatchObject(subjectOf(booked));
  });

  it('when a card payment lands on a booking cancelled meanwhile, then the automatic refund records booking.refunded with the subject', async () => {
    const booked = await book(4);
    const intent = await request(t.app)
      .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
      .set('X-Forwarded-For', booked.ip)
      .set('X-Booking-Token', booked.booking_token);
    expect(intent.status).toBe(200);
    const cancelled = await request(t.app)
      .post(`/api/bookings/${booked.booking_id}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager));
    expect(cancelled.status).toBe(200);

    const paid = fake.succeed((intent.body.client_secret as string).split('_secret_')[0]!);
    const delivered = await deliverStripeEvent(t, signedPaymentSucceededEvent(paid, { secret: TEST_WEBHOOK_SECRET }));

    expect(delivered.status).toBe(200);
    expect(await eventData(booked.booking_id, 'booking.refunded')).toMatchObject(subjectOf(booked));
  });
});
