import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  cardPaidBooking,
  createTestApp,
  deliverStripeEvent,
  type FakeRefund,
  type FakeStripe,
  seedTenant,
  signedChargeRefundedEvent,
  signedRefundEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
} from '@booking/test-kit';

// Stripe may report failed a refund it had reported succeeded (rare: the card was closed
// meanwhile), and the money is then back in the merchant's account. For an operator's refund, or
// one made in Stripe's dashboard, the refund becomes failed and its amount refundable again, the
// booking keeps its status and is flagged refund_reversed until refunds made since give that much
// back again; a `refunded` booking can then be refunded again through the routes. The app's real
// Stripe SDK talks to the fake Stripe; PostgreSQL and Redis are real.

describe('refunds Stripe reports failed after they succeeded', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url));
  });
  beforeEach(async () => {
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
    await stopFakeStripe(fake);
  });

  const deliver = (signed: { payload: string; signature: string }) => deliverStripeEvent(t, signed);
  const refund = (body: object, path = '/api/payments/refunds') =>
    request(t.app).post(path).set('Authorization', bearer(demo.api_keys.manager)).send(body);
  const bookingRow = (bookingId: string) => t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } });
  const cardPayment = (bookingId: string) =>
    t.deps.db.payment.findFirstOrThrow({ where: { bookingId, method: 'card' } });
  const refundRows = (bookingId: string) =>
    t.deps.db.refund.findMany({ where: { bookingId }, orderBy: { createdAt: 'asc' } });
  const seatsBooked = async (slotId: string) =>
    (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
  const eventNames = async (bookingId: string) =>
    (await t.deps.db.event.findMany({ where: { entityId: bookingId }, orderBy: { createdAt: 'asc' } })).map(
      (event) => event.name,
    );
  /** Stripe reports the refund failed from now on: as it lists it, and as its notification carries it. */
  const failAtProvider = (providerRefundId: string) => {
    const index = fake.refunds.findIndex((r) => r.id === providerRefundId);
    const failed: FakeRefund = { ...fake.refunds[index]!, status: 'failed' };
    fake.refunds[index] = failed;
    return failed;
  };

  it('when an operator refund that made the booking refunded is reported failed, then it is failed and refundable again, the booking stays refunded and flagged, a redelivery changes nothing, and refunding it again through the route gives the money back and clears the flag', async () => {
    const booked = await cardPaidBooking(t, fake, demo, { guests: 2 });
    const paid = booked.intent.amount;
    const first = await refund({ booking_id: booked.booking_id, reason: 'weather' });
    expect(first.status).toBe(201);
    expect(first.body.booking_status).toBe('refunded');
    const seatsAfterRefund = await seatsBooked(booked.slotId);
    const warn = jest.spyOn(t.deps.logger, 'warn');
    const failed = failAtProvider(first.body.provider_refund_id as string);
    const failure = signedRefundEvent(failed, { secret: TEST_WEBHOOK_SECRET, type: 'refund.updated' });

    expect((await deliver(failure)).status).toBe(200);

    expect(await refundRows(booked.booking_id)).toEqual([
      expect.objectContaining({
        id: first.body.refund_id,
        status: 'failed',
        reversedAt: expect.any(Date),
        idempotencyRef: null,
      }),
    ]);
    expect(await cardPayment(booked.booking_id)).toMatchObject({ status: 'succeeded', refundedCents: 0 });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'refunded', reviewReason: 'refund_reversed' });
    expect(await seatsBooked(booked.slotId)).toBe(seatsAfterRefund);
    // No event takes back what was sent: the catalogue has none for a failed refund.
    expect(await eventNames(booked.booking_id)).toEqual([
      'booking.created',
      'booking.confirmed',
      'refund.created',
      'booking.refunded',
    ]);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ booking_id: booked.booking_id, refund_id: first.body.refund_id, amount_cents: paid }),
      expect.any(String),
    );
    warn.mockRestore();

    // The same notification again, and refund.failed about the same change: nothing moves twice.
    expect((await deliver(failure)).status).toBe(200);
    expect(
      (await deliver(signedRefundEvent(failed, { secret: TEST_WEBHOOK_SECRET, type: 'refund.failed' }))).status,
    ).toBe(200);
    expect(await cardPayment(booked.booking_id)).toMatchObject({ status: 'succeeded', refundedCents: 0 });
    expect(await refundRows(booked.booking_id)).toHaveLength(1);

    // keep_booking_active still needs a confirmed booking.
    const keepActive = await refund(
      { booking_id: booked.booking_id, amount_cents: 100, keep_booking_active: true },
      '/api/refunds/partial',
    );
    expect(keepActive.status).toBe(409);
    expect(keepActive.body.error).toBe('booking_not_refundable');

    const again = await refund({ booking_id: booked.booking_id, reason: 'card closed, sent again' });

    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({
      amount_cents: paid,
      status: 'succeeded',
      booking_status: 'refunded',
      refunded_total_cents: paid,
      refundable_cents: 0,
    });
    expect(fake.refunds.filter((r) => r.payment_intent === booked.intent.id)).toHaveLength(2);
    expect(await cardPayment(booked.booking_id)).toMatchObject({ status: 'refunded', refundedCents: paid });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'refunded', reviewReason: null });
    expect(await seatsBooked(booked.slotId)).toBe(seatsAfterRefund);
    expect(await eventNames(booked.booking_id)).toEqual([
      'booking.created',
      'booking.confirmed',
      'refund.created',
      'booking.refunded',
      'refund.created',
    ]);
    // Given back: the booking is refunded and final again.
    expect((await refund({ booking_id: booked.booking_id })).body.error).toBe('booking_not_refundable');
  });

  it('when a partial refund of a confirmed booking is reported failed, then the booking stays confirmed and flagged until refunds made since give that amount back again', async () => {
    const booked = await cardPaidBooking(t, fake, demo, { guests: 2 });
    const paid = booked.intent.amount;
    const part = Math.floor(paid / 2);
    const first = await refund({ booking_id: booked.booking_id, amount_cents: part });
    expect(first.status).toBe(201);
    const seats = await seatsBooked(booked.slotId);

    const notified = await deliver(
      signedRefundEvent(failAtProvider(first.body.provider_refund_id as string), {
        secret: TEST_WEBHOOK_SECRET,
        type: 'refund.failed',
      }),
    );

    expect(notified.status).toBe(200);
    expect(await cardPayment(booked.booking_id)).toMatchObject({ status: 'succeeded', refundedCents: 0 });
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'confirmed',
      reviewReason: 'refund_reversed',
    });
    expect(await seatsBooked(booked.slotId)).toBe(seats);

    // Less than came back: still flagged.
    const some = await refund({ booking_id: booked.booking_id, amount_cents: part - 100 });
    expect(some.status).toBe(201);
    expect(some.body).toMatchObject({ booking_status: 'confirmed', refundable_cents: paid - part + 100 });
    expect((await bookingRow(booked.booking_id)).reviewReason).toBe('refund_reversed');

    const rest = await refund({ booking_id: booked.booking_id, amount_cents: 100 });

    expect(rest.status).toBe(201);
    expect(rest.body).toMatchObject({ booking_status: 'confirmed', refunded_total_cents: part });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'confirmed', reviewReason: null });
    expect(await cardPayment(booked.booking_id)).toMatchObject({ status: 'succeeded', refundedCents: part });
  });

  it('when a refund made in the Stripe dashboard is reported failed after it was recorded, then its amount is refundable again and the booking is flagged, and a dashboard refund of it clears the flag', async () => {
    const booked = await cardPaidBooking(t, fake, demo, { guests: 2 });
    const paid = booked.intent.amount;
    const made = (await t.deps.stripe!.refunds.create({ payment_intent: booked.intent.id })) as FakeRefund;
    expect(
      (await deliver(signedChargeRefundedEvent(booked.intent, [made], { secret: TEST_WEBHOOK_SECRET }))).status,
    ).toBe(200);
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'refunded', reviewReason: null });

    const failed = failAtProvider(made.id);
    expect((await deliver(signedRefundEvent(failed, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

    expect(await refundRows(booked.booking_id)).toEqual([
      expect.objectContaining({ providerRefundId: made.id, status: 'failed', reversedAt: expect.any(Date) }),
    ]);
    expect(await cardPayment(booked.booking_id)).toMatchObject({ status: 'succeeded', refundedCents: 0 });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'refunded', reviewReason: 'refund_reversed' });

    const again = await t.deps.stripe!.refunds.create({ payment_intent: booked.intent.id });
    expect(
      (
        await deliver(
          signedChargeRefundedEvent(booked.intent, [again as FakeRefund, failed], { secret: TEST_WEBHOOK_SECRET }),
        )
      ).status,
    ).toBe(200);

    expect(await refundRows(booked.booking_id)).toEqual([
      expect.objectContaining({ providerRefundId: made.id, status: 'failed' }),
      expect.objectContaining({ providerRefundId: again.id, status: 'succeeded' }),
    ]);
    expect(await cardPayment(booked.booking_id)).toMatchObject({ status: 'refunded', refundedCents: paid });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'refunded', reviewReason: null });
    expect(await eventNames(booked.booking_id)).toEqual([
      'booking.created',
      'booking.confirmed',
      'refund.created',
      'booking.refunded',
      'refund.created',
    ]);
  });
});
