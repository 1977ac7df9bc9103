import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import type { EventName } from '@booking/events';
import {
  bearer,
  cardPaidBooking,
  createTestApp,
  deliverStripeEvent,
  type FakePaymentIntent,
  type FakeStripe,
  type RefundObject,
  seedTenant,
  signedRefundEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  unreachableStripeUrl,
} from '@booking/test-kit';

// POST /api/refunds/{id}/reconcile. A refund is left pending by an app whose Stripe never answers
// (`offline`); the app pointed at the working fake Stripe (`t`) then reconciles it. Both apps share
// PostgreSQL and Redis.

interface CardBooking {
  bookingId: string;
  slotId: string;
  paidCents: number;
  intent: FakePaymentIntent;
}

describe('POST /api/refunds/{id}/reconcile', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let offline: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url));
    offline = createTestApp(stripeEnv(await unreachableStripeUrl()));
    other = await seedTenant(t.deps);
  });
  beforeEach(async () => {
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await offline?.close();
    await t?.close();
    await stopFakeStripe(fake);
  });

  const reconcile = (app: TestApp, key: string, refundId: string) =>
    request(app.app).post(`/api/refunds/${refundId}/reconcile`).set('Authorization', bearer(key));
  const deliver = (signed: { payload: string; signature: string }) => deliverStripeEvent(t, signed);

  /** A booking of `tenant` paid by card through the fake, ending confirmed. */
  async function cardBooking(tenant: DemoTenant, guests = 2): Promise<CardBooking> {
    const booked = await cardPaidBooking(t, fake, tenant, { guests });
    return {
      bookingId: booked.booking_id,
      slotId: booked.slotId,
      paidCents: booked.intent.amount,
      intent: booked.intent,
    };
  }

  /** A refund Stripe never received: the offline app answers 409 refund_in_progress and keeps it pending. */
  async function stuckRefund(booking: CardBooking, amountCents: number): Promise<string> {
    const res = await request(offline.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: booking.bookingId, amount_cents: amountCents, reason: 'lost' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'refund_in_progress', detail: { refund_id: expect.any(String) } });
    const refundId = res.body.detail.refund_id as string;
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    return refundId;
  }

  const refundRow = (refundId: string) => t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } });
  const seatsBooked = async (slotId: string) =>
    (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
  const bookingStatus = async (bookingId: string) =>
    (await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } })).status;
  const cardPayment = (bookingId: string) =>
    t.deps.db.payment.findFirstOrThrow({ where: { bookingId, method: 'card' } });
  const eventsOf = async (bookingId: string, name: EventName) =>
    (await t.deps.db.event.findMany({ where: { entityId: bookingId, name } })).map(
      (event) => event.data as Record<string, unknown>,
    );
  const refundEventNames = async (bookingId: string) =>
    (
      await t.deps.db.event.findMany({
        where: {
          entityId: bookingId,
          name: { in: ['refund.created', 'refund.partial_no_cancel', 'booking.refunded'] },
        },
      })
    )
      .map((event) => event.name)
      .sort();
  const providerRefundsOf = (intentId: string) => fake.refunds.filter((r) => r.payment_intent === intentId);
  const sentWithKey = (refundId: string) =>
    fake.requestsTo('POST', '/v1/refunds').filter((r) => r.idempotencyKey === `refund-${refundId}`);

  it('when Stripe never received the refund, then reconcile sends it again under the same key, it succeeds once with its events, and reconciling again is 409 refund_not_pending', async () => {
    const booking = await cardBooking(demo, 3);
    const seatsBefore = await seatsBooked(booking.slotId);
    const refundId = await stuckRefund(booking, booking.paidCents);
    expect(providerRefundsOf(booking.intent.id)).toHaveLength(0);

    const res = await reconcile(t, demo.api_keys.manager, refundId);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      refund_id: refundId,
      booking_id: booking.bookingId,
      payment_intent_id: booking.intent.id,
      provider_refund_id: expect.stringMatching(/^re_/),
      amount_cents: booking.paidCents,
      currency: 'USD',
      reason: 'lost',
      status: 'succeeded',
      keep_booking_active: false,
      booking_status: 'refunded',
      refunded_total_cents: booking.paidCents,
      refundable_cents: 0,
      created_at: expect.any(String),
    });
    expect(fake.requestsTo('GET', '/v1/refunds')).toEqual(
      expect.arrayContaining([expect.objectContaining({ body: { payment_intent: booking.intent.id, limit: '100' } })]),
    );
    expect(sentWithKey(refundId)).toHaveLength(1);
    expect(sentWithKey(refundId)[0]!.body).toEqual({
      payment_intent: booking.intent.id,
      amount: String(booking.paidCents),
      metadata: { booking_id: booking.bookingId, refund_id: refundId },
    });
    expect(providerRefundsOf(booking.intent.id)).toEqual([
      expect.objectContaining({ id: res.body.provider_refund_id, amount: booking.paidCents }),
    ]);
    expect(await refundRow(refundId)).toMatchObject({
      status: 'succeeded',
      providerRefundId: res.body.provider_refund_id,
    });
    expect(await cardPayment(booking.bookingId)).toMatchObject({
      refundedCents: booking.paidCents,
      status: 'refunded',
    });
    expect(await bookingStatus(booking.bookingId)).toBe('refunded');
    expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 3);
    expect(await eventsOf(booking.bookingId, 'refund.created')).toEqual([
      expect.objectContaining({ refund_id: refundId, amount_cents: booking.paidCents, status: 'succeeded' }),
    ]);
    expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([
      expect.objectContaining({ booking_id: booking.bookingId, amount_cents: booking.paidCents }),
    ]);

    const again = await reconcile(t, demo.api_keys.manager, refundId);

    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'refund_not_pending', detail: { refund_id: refundId, status: 'succeeded' } });
    expect(providerRefundsOf(booking.intent.id)).toHaveLength(1);
    expect(await refundEventNames(booking.bookingId)).toEqual(['booking.refunded', 'refund.created']);
    expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 3);
  });

  it('when a partial refund never reached Stripe, then reconcile refunds that amount and the booking stays confirmed', async () => {
    const booking = await cardBooking(demo);
    const refundId = await stuckRefund(booking, 900);

    const res = await reconcile(t, demo.api_keys.manager, refundId);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'succeeded',
      amount_cents: 900,
      booking_status: 'confirmed',
      refunded_total_cents: 900,
      refundable_cents: booking.paidCents - 900,
    });
    expect(providerRefundsOf(booking.intent.id).map((r) => r.amount)).toEqual([900]);
    expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 900, status: 'succeeded' });
    expect(await refundEventNames(booking.bookingId)).toEqual(['refund.created']);
  });

  it('when Stripe did receive the refund, then reconcile finds it by metadata.refund_id and settles it without a second refund, and its late notification changes nothing', async () => {
    const booking = await cardBooking(demo, 2);
    const seatsBefore = await seatsBooked(booking.slotId);
    const refundId = await stuckRefund(booking, booking.paidCents);
    // The request reached Stripe after all; only its answer was lost.
    const made = (await t.deps.stripe!.refunds.create({
      payment_intent: booking.intent.id,
      amount: booking.paidCents,
      metadata: { booking_id: booking.bookingId, refund_id: refundId },
    })) as unknown as RefundObject;
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending' });

    const res = await reconcile(t, demo.api_keys.manager, refundId);

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      refund_id: refundId,
      provider_refund_id: made.id,
      status: 'succeeded',
      booking_status: 'refunded',
      refundable_cents: 0,
    });
    expect(sentWithKey(refundId)).toHaveLength(0);
    expect(providerRefundsOf(booking.intent.id)).toEqual([expect.objectContaining({ id: made.id })]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await cardPayment(booking.bookingId)).toMatchObject({
      refundedCents: booking.paidCents,
      status: 'refunded',
    });
    expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 2);
    expect(await refundEventNames(booking.bookingId)).toEqual(['booking.refunded', 'refund.created']);

    expect((await deliver(signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

    expect(await refundEventNames(booking.bookingId)).toEqual(['booking.refunded', 'refund.created']);
    expect(await t.deps.db.refund.count({ where: { bookingId: booking.bookingId } })).toBe(1);
    expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 2);
  });

  it('when Stripe refuses the request sent again, then the refund is failed, its amount refundable again, and it is 502 payment_provider_error', async () => {
    const booking = await cardBooking(demo);
    const refundId = await stuckRefund(booking, booking.paidCents);
    // Meanwhile part of the charge was refunded elsewhere (the dashboard, not yet notified): the
    // full amount no longer fits.
    await t.deps.stripe!.refunds.create({ payment_intent: booking.intent.id, amount: 100 });

    const res = await reconcile(t, demo.api_keys.manager, refundId);

    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({
      error: 'payment_provider_error',
      detail: { refund_id: refundId, provider_code: 'charge_already_refunded' },
    });
    expect(await refundRow(refundId)).toMatchObject({ status: 'failed' });
    expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 0 });
    expect(await refundEventNames(booking.bookingId)).toEqual([]);
  });

  it('when Stripe still does not answer, then it is 409 refund_in_progress and the refund stays pending with its amount reserved', async () => {
    const booking = await cardBooking(demo);
    const refundId = await stuckRefund(booking, 700);

    const res = await reconcile(offline, demo.api_keys.manager, refundId);

    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'refund_in_progress', detail: { refund_id: refundId } });
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 700 });
  });

  it('when Stripe does not know the payment intent (the service’s key is another account’s or mode’s), then it is 409 refund_in_progress, the refund stays pending with its amount reserved and is never sent again, and its notification settles it once', async () => {
    const booking = await cardBooking(demo);
    const refundId = await stuckRefund(booking, 700);
    fake.forgetIntent(booking.intent.id);

    const res = await reconcile(t, demo.api_keys.manager, refundId);

    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      error: 'refund_in_progress',
      detail: { refund_id: refundId, message: expect.stringContaining('does not know the payment') },
    });
    expect(sentWithKey(refundId)).toHaveLength(0);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 700 });

    // It had been made on the account the key used to be of; its notification settles it, once.
    const made: RefundObject = {
      id: `re_live_${refundId.replaceAll('-', '')}`,
      object: 'refund',
      status: 'succeeded',
      amount: 700,
      currency: booking.intent.currency,
      payment_intent: booking.intent.id,
      metadata: { booking_id: booking.bookingId, refund_id: refundId },
    };
    expect((await deliver(signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 700 });
    expect(await refundEventNames(booking.bookingId)).toEqual(['refund.created']);
  });

  it('when Stripe named the refund but does not list it, then it is 409 refund_in_progress and the refund is never sent again', async () => {
    const booking = await cardBooking(demo);
    fake.answerNextRefunds('pending');
    const asked = await request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: booking.bookingId, amount_cents: 700 });
    expect([asked.status, asked.body.status]).toEqual([202, 'pending']);
    const refundId = asked.body.refund_id as string;
    const named = asked.body.provider_refund_id as string;
    expect(sentWithKey(refundId)).toHaveLength(1);
    // Whatever the reason Stripe's list leaves it out, a refund it named exists: never asked for twice.
    fake.refunds.splice(
      fake.refunds.findIndex((made) => made.id === named),
      1,
    );

    const res = await reconcile(t, demo.api_keys.manager, refundId);

    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: 'refund_in_progress', detail: { refund_id: refundId } });
    expect(sentWithKey(refundId)).toHaveLength(1);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: named });
    expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 700 });
  });

  it('when the caller is staff, another tenant, or names no refund, or payments are not configured, then it is 403, 404 refund_not_found or 503 and nothing moves', async () => {
    const booking = await cardBooking(demo);
    const refundId = await stuckRefund(booking, 500);
    const unconfigured = createTestApp({ STRIPE_SECRET_KEY: '', STRIPE_PUBLISHABLE_KEY: '' });
    try {
      const staff = await reconcile(t, demo.api_keys.staff, refundId);
      const anonymous = await request(t.app).post(`/api/refunds/${refundId}/reconcile`);
      const otherTenant = await reconcile(t, other.api_keys.admin, refundId);
      const notUuid = await reconcile(t, demo.api_keys.manager, 'not-a-uuid');
      const unknown = await reconcile(t, demo.api_keys.manager, '00000000-0000-4000-8000-000000000000');
      const noStripe = await reconcile(unconfigured, demo.api_keys.manager, refundId);

      expect(staff.status).toBe(403);
      expect(staff.body.error).toBe('forbidden');
      expect(anonymous.status).toBe(401);
      expect(otherTenant.status).toBe(404);
      expect(otherTenant.body).toEqual({ error: 'refund_not_found' });
      expect(notUuid.status).toBe(404);
      expect(notUuid.body).toEqual({ error: 'refund_not_found' });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ error: 'refund_not_found' });
      expect(noStripe.status).toBe(503);
      expect(noStripe.body.error).toBe('payments_not_configured');
    } finally {
      await unconfigured.close();
    }
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 500 });
    expect(sentWithKey(refundId)).toHaveLength(0);
    expect(providerRefundsOf(booking.intent.id)).toHaveLength(0);
  });
});
