import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS, type EventName } from '@booking/events';
import {
  bearer,
  cardPaidBooking,
  confirmedBooking,
  createBooking,
  createTestApp,
  deliverStripeEvent,
  type FakePaymentIntent,
  type FakeStripe,
  keyIdOf,
  type RefundObject,
  seedTenant,
  SHORT_DEADLINE_ENV,
  signedChargeRefundedEvent,
  signedPaymentSucceededEvent,
  signedRefundEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  unreachableStripeUrl,
} from '@booking/test-kit';

// Refunds go through the app's real Stripe SDK to the fake Stripe on 127.0.0.1; card payments
// are made the same way (PaymentIntent, then a signed payment_intent.succeeded). PostgreSQL and
// Redis are real.

interface CardBooking {
  bookingId: string;
  slotId: string;
  holdId: string;
  guests: number;
  /** What the card paid (total less any gift card). */
  paidCents: number;
  intent: FakePaymentIntent;
}

describe('refunds through the payment provider', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url));
    other = await seedTenant(t.deps);
  });
  beforeEach(async () => {
    demo = await seedTenant(t.deps);
  });
  afterEach(() => {
    fake.failNextRefunds(0);
    fake.rateLimitNextRefunds(0);
  });
  afterAll(async () => {
    await t?.close();
    await stopFakeStripe(fake);
  });

  function refund(app: TestApp, key: string, body: object) {
    return request(app.app).post('/api/payments/refunds').set('Authorization', bearer(key)).send(body);
  }
  function partialRefund(app: TestApp, key: string, body: object) {
    return request(app.app).post('/api/refunds/partial').set('Authorization', bearer(key)).send(body);
  }
  const deliver = (signed: { payload: string; signature: string }) => deliverStripeEvent(t, signed);

  /** A booking of `tenant` paid by card through the fake (after any gift card part), ending confirmed. */
  async function cardBooking(
    tenant: DemoTenant,
    options: { slotIndex?: number; guests?: number; giftCardCode?: string } = {},
  ): Promise<CardBooking> {
    const booked = await cardPaidBooking(t, fake, tenant, options);
    return {
      bookingId: booked.booking_id,
      slotId: booked.slotId,
      holdId: booked.holdId,
      guests: booked.guests,
      paidCents: booked.intent.amount,
      intent: booked.intent,
    };
  }

  const seatsBooked = async (slotId: string) =>
    (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
  const bookingStatus = async (bookingId: string) =>
    (await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } })).status;
  const cardPayment = (bookingId: string) =>
    t.deps.db.payment.findFirstOrThrow({ where: { bookingId, method: 'card' } });
  const eventsOf = async (bookingId: string, name: EventName) =>
    (await t.deps.db.event.findMany({ where: { entityId: bookingId, name }, orderBy: { createdAt: 'asc' } })).map(
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
  const common = (name: EventName, bookingId: string) => ({
    event_id: expect.any(String),
    schema_version: EVENT_SCHEMA_VERSIONS[name],
    entity_type: 'booking',
    entity_id: bookingId,
  });
  /** The booking and contact fields every booking event carries, read from the booking row. */
  const subject = async (bookingId: string) => {
    const b = await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId }, include: { customer: true } });
    return {
      booking_id: b.id,
      experience_id: b.experienceId,
      venue_id: b.venueId,
      slot_id: b.slotId,
      customer_email: b.customer.email,
    };
  };

  describe('POST /api/payments/refunds', () => {
    it('when a manager refunds a card booking in full, then the provider refunds it all, the booking is refunded, its seats return and refund.created and booking.refunded are recorded', async () => {
      const booking = await cardBooking(demo, { guests: 3 });
      const seatsBefore = await seatsBooked(booking.slotId);

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, reason: 'weather' });

      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        refund_id: expect.any(String),
        booking_id: booking.bookingId,
        payment_intent_id: booking.intent.id,
        provider_refund_id: expect.stringMatching(/^re_/),
        amount_cents: booking.paidCents,
        currency: 'USD',
        reason: 'weather',
        status: 'succeeded',
        keep_booking_active: false,
        booking_status: 'refunded',
        refunded_total_cents: booking.paidCents,
        refundable_cents: 0,
        created_at: expect.any(String),
      });
      const [providerRefund] = providerRefundsOf(booking.intent.id);
      expect(providerRefundsOf(booking.intent.id)).toHaveLength(1);
      expect(providerRefund).toMatchObject({
        id: res.body.provider_refund_id,
        amount: booking.paidCents,
        metadata: { booking_id: booking.bookingId, refund_id: res.body.refund_id },
      });
      expect(await bookingStatus(booking.bookingId)).toBe('refunded');
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 3);
      expect(await cardPayment(booking.bookingId)).toMatchObject({
        refundedCents: booking.paidCents,
        status: 'refunded',
      });
      const row = await t.deps.db.refund.findUniqueOrThrow({ where: { id: res.body.refund_id } });
      expect(row).toMatchObject({
        status: 'succeeded',
        providerRefundId: providerRefund!.id,
        actorKeyId: await keyIdOf(t, demo.api_keys.manager),
      });
      expect(await eventsOf(booking.bookingId, 'refund.created')).toEqual([
        {
          ...common('refund.created', booking.bookingId),
          refund_id: res.body.refund_id,
          payment_intent_id: booking.intent.id,
          amount_cents: booking.paidCents,
          reason: 'weather',
          status: 'succeeded',
        },
      ]);
      expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([
        {
          ...common('booking.refunded', booking.bookingId),
          ...(await subject(booking.bookingId)),
          amount_cents: booking.paidCents,
        },
      ]);
      expect(await eventsOf(booking.bookingId, 'refund.partial_no_cancel')).toEqual([]);
    });

    it('when part of the payment is refunded, then the booking stays confirmed with its seats and only refund.created is recorded', async () => {
      const booking = await cardBooking(demo);
      const seatsBefore = await seatsBooked(booking.slotId);

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: 1000 });

      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        amount_cents: 1000,
        reason: null,
        status: 'succeeded',
        booking_status: 'confirmed',
        refunded_total_cents: 1000,
        refundable_cents: booking.paidCents - 1000,
      });
      expect(providerRefundsOf(booking.intent.id).map((r) => r.amount)).toEqual([1000]);
      expect(await bookingStatus(booking.bookingId)).toBe('confirmed');
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore);
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 1000, status: 'succeeded' });
      expect(await eventsOf(booking.bookingId, 'refund.created')).toEqual([
        {
          ...common('refund.created', booking.bookingId),
          refund_id: res.body.refund_id,
          payment_intent_id: booking.intent.id,
          amount_cents: 1000,
          reason: null,
          status: 'succeeded',
        },
      ]);
      expect(await refundEventNames(booking.bookingId)).toEqual(['refund.created']);
    });

    it('when a second partial refund completes the amount paid, then the booking is refunded with the total in booking.refunded', async () => {
      const booking = await cardBooking(demo, { guests: 2 });
      const seatsBefore = await seatsBooked(booking.slotId);
      const first = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: 1000 });
      expect(first.status).toBe(201);

      const second = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, reason: 'the rest' });

      expect(second.status).toBe(201);
      expect(second.body).toMatchObject({
        amount_cents: booking.paidCents - 1000,
        booking_status: 'refunded',
        refunded_total_cents: booking.paidCents,
        refundable_cents: 0,
      });
      expect(await bookingStatus(booking.bookingId)).toBe('refunded');
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 2);
      expect((await eventsOf(booking.bookingId, 'refund.created')).map((e) => e.amount_cents).sort()).toEqual(
        [1000, booking.paidCents - 1000].sort(),
      );
      expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([
        {
          ...common('booking.refunded', booking.bookingId),
          ...(await subject(booking.bookingId)),
          amount_cents: booking.paidCents,
        },
      ]);
    });

    it('when part of a booking was paid by gift card, then refunding the card payment in full keeps the booking and its gift card part, which can be reissued', async () => {
      const booking = await cardBooking(demo, { giftCardCode: demo.gift_cards[1]!.code });
      const giftCardPaid = await t.deps.db.payment.findFirstOrThrow({
        where: { bookingId: booking.bookingId, method: 'gift_card' },
      });
      expect(giftCardPaid.amountCents).toBe(500);
      const seatsBefore = await seatsBooked(booking.slotId);

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId });

      // 500 cents are still paid (by gift card): not "nothing paid", so the booking stays.
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ amount_cents: booking.paidCents, booking_status: 'confirmed' });
      expect(providerRefundsOf(booking.intent.id).map((r) => r.amount)).toEqual([booking.paidCents]);
      expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([]);
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore);

      const reissued = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/reissue-gift-card`)
        .set('Authorization', bearer(demo.api_keys.manager));
      expect(reissued.status).toBe(200);
      expect(reissued.body.gift_card.balance_cents).toBe(500);
    });

    it('when a cancelled card booking is refunded, then it becomes refunded without giving its seats back twice', async () => {
      const booking = await cardBooking(demo, { guests: 2 });
      const cancelled = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/cancel`)
        .set('Authorization', bearer(demo.api_keys.manager));
      expect(cancelled.status).toBe(200);
      const seatsAfterCancel = await seatsBooked(booking.slotId);

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId });

      expect(res.status).toBe(201);
      expect(await bookingStatus(booking.bookingId)).toBe('refunded');
      expect(await seatsBooked(booking.slotId)).toBe(seatsAfterCancel);
      expect(await refundEventNames(booking.bookingId)).toEqual(['booking.refunded', 'refund.created']);
    });

    it('when the amount is more than is left to refund, then it is 400 refund_exceeds_paid with what is refundable and the provider is not asked', async () => {
      const booking = await cardBooking(demo);
      expect(
        (await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: 700 })).status,
      ).toBe(201);
      const asked = fake.requestsTo('POST', '/v1/refunds').length;

      const res = await refund(t, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        amount_cents: booking.paidCents - 699,
      });

      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'refund_exceeds_paid', detail: { refundable_cents: booking.paidCents - 700 } });
      expect(fake.requestsTo('POST', '/v1/refunds')).toHaveLength(asked);
      expect(await t.deps.db.refund.count({ where: { bookingId: booking.bookingId } })).toBe(1);
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 700 });
    });

    it('when six managers refund 40% each at the same time, then exactly two succeed and the refunds never exceed what was paid', async () => {
      const booking = await cardBooking(demo);
      const share = Math.floor(booking.paidCents * 0.4);

      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: share }),
        ),
      );

      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([201, 201, 400, 400, 400, 400]);
      for (const loser of results.filter((r) => r.status === 400)) {
        expect(loser.body.error).toBe('refund_exceeds_paid');
      }
      const succeeded = await t.deps.db.refund.findMany({ where: { bookingId: booking.bookingId } });
      expect(succeeded.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      const providerTotal = providerRefundsOf(booking.intent.id).reduce((sum, r) => sum + r.amount, 0);
      expect(providerTotal).toBe(2 * share);
      expect(providerTotal).toBeLessThanOrEqual(booking.paidCents);
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 2 * share });
      expect(await eventsOf(booking.bookingId, 'refund.created')).toHaveLength(2);
      expect(await bookingStatus(booking.bookingId)).toBe('confirmed');
    });

    it('when the provider answers 5xx, then the refund stays pending with its amount reserved (409) until the provider reports it failed', async () => {
      const booking = await cardBooking(demo);
      // The SDK retries twice: all three attempts fail. A 5xx says nothing about whether the
      // refund happened, so it is not released.
      fake.failNextRefunds(3);

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: 1500 });

      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ error: 'refund_in_progress', detail: { refund_id: expect.any(String) } });
      const refundId = res.body.detail.refund_id as string;
      expect(await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
        status: 'pending',
        amountCents: 1500,
      });
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 1500, status: 'succeeded' });
      // The reserved 1500 still counts: the whole amount can no longer be asked for.
      const over = await refund(t, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        amount_cents: booking.paidCents,
      });
      expect(over.status).toBe(400);
      expect(over.body.error).toBe('refund_exceeds_paid');

      const failed: RefundObject = {
        id: `re_failed_${refundId.slice(0, 8)}`,
        object: 'refund',
        status: 'failed',
        amount: 1500,
        currency: 'usd',
        payment_intent: booking.intent.id,
        metadata: { booking_id: booking.bookingId, refund_id: refundId },
      };
      expect(
        (await deliver(signedRefundEvent(failed, { secret: TEST_WEBHOOK_SECRET, type: 'refund.failed' }))).status,
      ).toBe(200);
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 0 });
      expect(await refundEventNames(booking.bookingId)).toEqual([]);

      const retry = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId });
      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({ amount_cents: booking.paidCents, booking_status: 'refunded' });
    });

    it('when Stripe rate-limits the request, then the refund stays pending with its amount reserved (409), and the refund an earlier try made is settled from it once', async () => {
      const booking = await cardBooking(demo);
      fake.rateLimitNextRefunds(1);

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: 1500 });

      // A 429 says nothing of an earlier try under the same key: nothing is released.
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ error: 'refund_in_progress', detail: { refund_id: expect.any(String) } });
      const refundId = res.body.detail.refund_id as string;
      expect(await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
        status: 'pending',
      });
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 1500 });

      // That earlier try had reached Stripe; its notification settles it, once.
      const made = await t.deps.stripe!.refunds.create({
        payment_intent: booking.intent.id,
        amount: 1500,
        metadata: { booking_id: booking.bookingId, refund_id: refundId },
      });
      const notified = signedRefundEvent(made as never, { secret: TEST_WEBHOOK_SECRET, type: 'refund.updated' });
      expect((await deliver(notified)).status).toBe(200);
      expect(await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
        status: 'succeeded',
        providerRefundId: made.id,
      });
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 1500 });
      expect(await eventsOf(booking.bookingId, 'refund.created')).toHaveLength(1);
      const over = await refund(t, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        amount_cents: booking.paidCents,
      });
      expect(over.body.error).toBe('refund_exceeds_paid');
    });

    it('when a request is retried with the same Idempotency-Key, then the stored answer is replayed and the provider refunds once', async () => {
      const booking = await cardBooking(demo);
      const send = () =>
        refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: 800 }).set(
          'Idempotency-Key',
          `refund-${booking.bookingId}`,
        );

      const first = await send();
      const second = await send();

      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.body).toEqual(first.body);
      expect(providerRefundsOf(booking.intent.id)).toHaveLength(1);
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 800 });
    });

    it('when the caller is staff or has no key, then it is 403 or 401 and nothing is refunded', async () => {
      const booking = await cardBooking(demo);

      const staff = await refund(t, demo.api_keys.staff, { booking_id: booking.bookingId });
      const anonymous = await request(t.app).post('/api/payments/refunds').send({ booking_id: booking.bookingId });
      const staffPartial = await partialRefund(t, demo.api_keys.staff, {
        booking_id: booking.bookingId,
        keep_booking_active: true,
      });

      expect(staff.status).toBe(403);
      expect(staff.body.error).toBe('forbidden');
      expect(anonymous.status).toBe(401);
      expect(staffPartial.status).toBe(403);
      expect(providerRefundsOf(booking.intent.id)).toHaveLength(0);
      expect(await t.deps.db.refund.count({ where: { bookingId: booking.bookingId } })).toBe(0);
    });

    it("when another tenant's manager refunds the booking, then it is 404 booking_not_found and nothing changes", async () => {
      const booking = await cardBooking(demo);

      const res = await refund(t, other.api_keys.manager, { booking_id: booking.bookingId });
      const partial = await partialRefund(t, other.api_keys.admin, {
        booking_id: booking.bookingId,
        keep_booking_active: false,
      });

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'booking_not_found' });
      expect(partial.status).toBe(404);
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 0 });
      expect(providerRefundsOf(booking.intent.id)).toHaveLength(0);
    });

    it('when the booking has no card payment or does not exist, then it is 409 booking_not_refundable or 404', async () => {
      const { booking_id: paidByGiftCard } = await confirmedBooking(t, demo, { slotIndex: 1, guests: 1 });

      const res = await refund(t, demo.api_keys.manager, { booking_id: paidByGiftCard });
      const missing = await refund(t, demo.api_keys.manager, { booking_id: '00000000-0000-4000-8000-000000000000' });

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('booking_not_refundable');
      expect(await bookingStatus(paidByGiftCard)).toBe('confirmed');
      expect(missing.status).toBe(404);
      expect(missing.body.error).toBe('booking_not_found');
    });

    it('when the paid amount was reissued as a gift card, then a card refund is 409 and nothing is paid out twice', async () => {
      const booking = await cardBooking(demo, { slotIndex: 4 });
      const reissued = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/reissue-gift-card`)
        .set('Authorization', bearer(demo.api_keys.manager));
      expect(reissued.status).toBe(200);
      const refundsBefore = fake.refunds.length;

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId });

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('booking_not_refundable');
      expect(fake.refunds).toHaveLength(refundsBefore);
      expect(await t.deps.db.refund.count({ where: { bookingId: booking.bookingId } })).toBe(0);
    });

    it('when the booking is refunded already, then another refund is 409 booking_not_refundable', async () => {
      const booking = await cardBooking(demo);
      expect((await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId })).status).toBe(201);

      const again = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId });

      expect(again.status).toBe(409);
      expect(again.body.error).toBe('booking_not_refundable');
      expect(providerRefundsOf(booking.intent.id)).toHaveLength(1);
    });

    it.each([
      ['no booking_id', { booking_id: undefined }],
      ['a booking_id that is not a uuid', { booking_id: 'nope' }],
      ['a zero amount', { amount_cents: 0 }],
      ['a negative amount', { amount_cents: -100 }],
      ['a fractional amount', { amount_cents: 12.5 }],
      ['an amount as a string', { amount_cents: '100' }],
      ['a reason over 500 characters', { reason: 'x'.repeat(501) }],
      ['an empty reason', { reason: '' }],
      ['an unknown field', { keep_booking_active: true }],
    ])('when the body has %s, then it is 400 invalid_body', async (_what, patch) => {
      const booking = await cardBooking(demo);

      const res = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, ...patch });

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ field: expect.any(String) })]));
      expect(providerRefundsOf(booking.intent.id)).toHaveLength(0);
    });

    it('when payments are not configured, then it is 503 payments_not_configured', async () => {
      const booking = await cardBooking(demo);
      const unconfigured = createTestApp({ STRIPE_SECRET_KEY: '', STRIPE_PUBLISHABLE_KEY: '' });
      try {
        const res = await refund(unconfigured, demo.api_keys.manager, { booking_id: booking.bookingId });

        expect(res.status).toBe(503);
        expect(res.body.error).toBe('payments_not_configured');
        expect(await t.deps.db.refund.count({ where: { bookingId: booking.bookingId } })).toBe(0);
      } finally {
        await unconfigured.close();
      }
    });
  });

  describe('POST /api/refunds/partial', () => {
    it('when keep_booking_active refunds in two steps up to everything, then the booking stays confirmed with its seats and each step records refund.created and refund.partial_no_cancel with the running total', async () => {
      const booking = await cardBooking(demo, { guests: 2 });
      const seatsBefore = await seatsBooked(booking.slotId);

      const first = await partialRefund(t, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        amount_cents: 1200,
        reason: 'late start',
        keep_booking_active: true,
      });
      const rest = await partialRefund(t, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        reason: 'goodwill',
        keep_booking_active: true,
      });

      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({ keep_booking_active: true, booking_status: 'confirmed' });
      expect(rest.status).toBe(201);
      expect(rest.body).toMatchObject({
        amount_cents: booking.paidCents - 1200,
        booking_status: 'confirmed',
        refunded_total_cents: booking.paidCents,
        refundable_cents: 0,
      });
      expect(await bookingStatus(booking.bookingId)).toBe('confirmed');
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore);
      expect(await cardPayment(booking.bookingId)).toMatchObject({
        refundedCents: booking.paidCents,
        status: 'refunded',
      });
      const partials = await eventsOf(booking.bookingId, 'refund.partial_no_cancel');
      expect(partials.sort((a, b) => Number(a.refund_total_cents) - Number(b.refund_total_cents))).toEqual([
        {
          ...common('refund.partial_no_cancel', booking.bookingId),
          refund_id: first.body.refund_id,
          payment_intent_id: booking.intent.id,
          booking_id: booking.bookingId,
          amount_cents: 1200,
          refund_total_cents: 1200,
          reason: 'late start',
          status: 'succeeded',
        },
        {
          ...common('refund.partial_no_cancel', booking.bookingId),
          refund_id: rest.body.refund_id,
          payment_intent_id: booking.intent.id,
          booking_id: booking.bookingId,
          amount_cents: booking.paidCents - 1200,
          refund_total_cents: booking.paidCents,
          reason: 'goodwill',
          status: 'succeeded',
        },
      ]);
      expect(await eventsOf(booking.bookingId, 'refund.created')).toHaveLength(2);
      expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([]);
    });

    it('when keep_booking_active is false, then it refunds like POST /api/payments/refunds', async () => {
      const booking = await cardBooking(demo);

      const res = await partialRefund(t, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        keep_booking_active: false,
      });

      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ keep_booking_active: false, booking_status: 'refunded' });
      expect(await refundEventNames(booking.bookingId)).toEqual(['booking.refunded', 'refund.created']);
    });

    it('when keep_booking_active is asked for a booking that is not confirmed, then it is 409 booking_not_refundable', async () => {
      const booking = await cardBooking(demo);
      await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/cancel`)
        .set('Authorization', bearer(demo.api_keys.manager))
        .expect(200);

      const res = await partialRefund(t, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        keep_booking_active: true,
      });

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('booking_not_refundable');
      expect(providerRefundsOf(booking.intent.id)).toHaveLength(0);
    });

    it.each([
      ['no keep_booking_active', {}],
      ['keep_booking_active that is not a boolean', { keep_booking_active: 'yes' }],
      ['a zero amount', { keep_booking_active: true, amount_cents: 0 }],
    ])('when the body has %s, then it is 400 invalid_body', async (_what, patch) => {
      const booking = await cardBooking(demo);

      const res = await partialRefund(t, demo.api_keys.manager, { booking_id: booking.bookingId, ...patch });

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
    });
  });

  describe('a retry of a refund whose first run reserved it and then failed', () => {
    it('when the first run got Stripe to refund after its deadline answered 503, then its retry settles that refund and pays out nothing more', async () => {
      const slow = createTestApp({ ...stripeEnv(fake.url), ...SHORT_DEADLINE_ENV });
      try {
        const paid = await cardBooking(demo);
        const send = () =>
          request(slow.app)
            .post('/api/refunds/partial')
            .set('Authorization', bearer(demo.api_keys.manager))
            .set('Idempotency-Key', 'refund-once')
            .send({ booking_id: paid.bookingId, amount_cents: 1_000, keep_booking_active: true });
        fake.delayNextRefunds(1, 1_500);

        expect((await send()).status).toBe(503);
        // Stripe refunds at 1.5 s, too late for the first run to record it; its key leaves flight at 2 s.
        await new Promise((resolve) => setTimeout(resolve, 2_500));
        const retry = await send();

        expect([retry.status, retry.body.status, retry.headers['idempotent-replayed']]).toEqual([
          201,
          'succeeded',
          'true',
        ]);
        expect(fake.refunds.filter((r) => r.payment_intent === paid.intent.id)).toHaveLength(1);
        const refunds = await t.deps.db.refund.findMany({ where: { bookingId: paid.bookingId } });
        expect(refunds.map((r) => [r.id, r.status, r.amountCents])).toEqual([
          [retry.body.refund_id, 'succeeded', 1_000],
        ]);
        expect((await cardPayment(paid.bookingId)).refundedCents).toBe(1_000);
      } finally {
        fake.delayNextRefunds(0, 0);
        await slow.close();
      }
    });

    it('when Stripe refused the first run, then a retry with its key asks again rather than replaying the failed refund', async () => {
      const paid = await cardBooking(demo);
      // Refunded in full in the Stripe dashboard: Stripe refuses any refund of ours.
      await fetch(`${fake.url}/v1/refunds`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `payment_intent=${paid.intent.id}`,
      });
      const send = () =>
        partialRefund(t, demo.api_keys.manager, {
          booking_id: paid.bookingId,
          amount_cents: 500,
          keep_booking_active: true,
        }).set('Idempotency-Key', 'refused-once');

      const first = await send();
      const retry = await send();

      for (const res of [first, retry]) {
        expect([res.status, res.body.error, res.headers['idempotent-replayed']]).toEqual([
          502,
          'payment_provider_error',
          undefined,
        ]);
      }
      const refunds = await t.deps.db.refund.findMany({ where: { bookingId: paid.bookingId } });
      expect(refunds.map((r) => [r.status, r.idempotencyRef])).toEqual([
        ['failed', null],
        ['failed', null],
      ]);
    });
  });

  describe('provider refund notifications', () => {
    let offline: TestApp;

    beforeAll(async () => {
      // The same database, but a Stripe that never answers: refunds asked through it stay pending.
      offline = createTestApp(stripeEnv(await unreachableStripeUrl()));
    });
    afterAll(() => offline?.close());

    /** A refund the provider never answered: 409 refund_in_progress, kept pending with its amount reserved. */
    async function pendingRefund(booking: CardBooking, amountCents: number): Promise<string> {
      const res = await refund(offline, demo.api_keys.manager, {
        booking_id: booking.bookingId,
        amount_cents: amountCents,
        reason: 'no answer',
      });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ error: 'refund_in_progress', detail: { refund_id: expect.any(String) } });
      return res.body.detail.refund_id as string;
    }

    /** Has the fake make the refund, as if the request had reached the provider after all. */
    async function madeAtProvider(booking: CardBooking, refundId: string, amount: number): Promise<RefundObject> {
      const made = await t.deps.stripe!.refunds.create({
        payment_intent: booking.intent.id,
        amount,
        metadata: { booking_id: booking.bookingId, refund_id: refundId },
      });
      return made as unknown as RefundObject;
    }

    it('when the provider does not answer, then the refund stays pending with its amount reserved, and refund.updated later settles it once', async () => {
      const booking = await cardBooking(demo, { guests: 2 });
      const seatsBefore = await seatsBooked(booking.slotId);
      const refundId = await pendingRefund(booking, booking.paidCents);
      expect(await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
        status: 'pending',
        providerRefundId: null,
      });
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: booking.paidCents });
      const meanwhile = await refund(t, demo.api_keys.manager, { booking_id: booking.bookingId, amount_cents: 1 });
      expect(meanwhile.body).toEqual({ error: 'refund_exceeds_paid', detail: { refundable_cents: 0 } });
      expect(await refundEventNames(booking.bookingId)).toEqual([]);
      const providerRefund = await madeAtProvider(booking, refundId, booking.paidCents);
      const updated = signedRefundEvent(providerRefund, { secret: TEST_WEBHOOK_SECRET });

      const delivered = await deliver(updated);
      const replayed = await deliver(updated);
      const charge = await deliver(
        signedChargeRefundedEvent(booking.intent, [providerRefund], { secret: TEST_WEBHOOK_SECRET }),
      );

      expect([delivered.status, replayed.status, charge.status]).toEqual([200, 200, 200]);
      expect(await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
        status: 'succeeded',
        providerRefundId: providerRefund.id,
      });
      expect(await t.deps.db.refund.count({ where: { bookingId: booking.bookingId } })).toBe(1);
      expect(await bookingStatus(booking.bookingId)).toBe('refunded');
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 2);
      expect(await cardPayment(booking.bookingId)).toMatchObject({
        refundedCents: booking.paidCents,
        status: 'refunded',
      });
      expect(await eventsOf(booking.bookingId, 'refund.created')).toEqual([
        {
          ...common('refund.created', booking.bookingId),
          refund_id: refundId,
          payment_intent_id: booking.intent.id,
          amount_cents: booking.paidCents,
          reason: 'no answer',
          status: 'succeeded',
        },
      ]);
      expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([
        {
          ...common('booking.refunded', booking.bookingId),
          ...(await subject(booking.bookingId)),
          amount_cents: booking.paidCents,
        },
      ]);
    });

    it('when charge.refunded reports a pending refund as made, then it settles once and a later replay changes nothing', async () => {
      const booking = await cardBooking(demo);
      const refundId = await pendingRefund(booking, 900);
      const providerRefund = await madeAtProvider(booking, refundId, 900);
      const charge = signedChargeRefundedEvent(booking.intent, [providerRefund], { secret: TEST_WEBHOOK_SECRET });

      expect((await deliver(charge)).status).toBe(200);
      expect((await deliver(charge)).status).toBe(200);
      expect((await deliver(signedRefundEvent(providerRefund, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

      expect(await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
        status: 'succeeded',
        providerRefundId: providerRefund.id,
      });
      expect(await eventsOf(booking.bookingId, 'refund.created')).toHaveLength(1);
      expect(await refundEventNames(booking.bookingId)).toEqual(['refund.created']);
      expect(await bookingStatus(booking.bookingId)).toBe('confirmed');
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 900 });
    });

    it('when the provider reports a pending refund as failed, then it is failed, its amount is refundable again and nothing is emitted', async () => {
      const booking = await cardBooking(demo);
      const refundId = await pendingRefund(booking, 1100);
      const failed: RefundObject = {
        id: `re_failed_${refundId.slice(0, 8)}`,
        object: 'refund',
        status: 'failed',
        amount: 1100,
        currency: 'usd',
        payment_intent: booking.intent.id,
        metadata: { booking_id: booking.bookingId, refund_id: refundId },
      };

      const res = await deliver(signedRefundEvent(failed, { secret: TEST_WEBHOOK_SECRET, type: 'refund.failed' }));
      const late = await deliver(
        signedRefundEvent({ ...failed, status: 'succeeded' }, { secret: TEST_WEBHOOK_SECRET }),
      );

      expect([res.status, late.status]).toEqual([200, 200]);
      expect(await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } })).toMatchObject({
        status: 'failed',
        providerRefundId: failed.id,
      });
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 0 });
      expect(await refundEventNames(booking.bookingId)).toEqual([]);
      expect(await bookingStatus(booking.bookingId)).toBe('confirmed');
    });

    it('when a refund made in the provider dashboard is reported, then it is recorded once as a succeeded refund with its events, and a full one refunds the booking', async () => {
      const booking = await cardBooking(demo, { guests: 2 });
      const seatsBefore = await seatsBooked(booking.slotId);
      const dashboard = (await t.deps.stripe!.refunds.create({
        payment_intent: booking.intent.id,
        amount: 600,
      })) as unknown as RefundObject;
      const charge = signedChargeRefundedEvent(booking.intent, [dashboard], { secret: TEST_WEBHOOK_SECRET });

      expect((await deliver(charge)).status).toBe(200);
      expect((await deliver(charge)).status).toBe(200);
      expect((await deliver(signedRefundEvent(dashboard, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

      const recorded = await t.deps.db.refund.findMany({ where: { bookingId: booking.bookingId } });
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({
        providerRefundId: dashboard.id,
        amountCents: 600,
        status: 'succeeded',
        actorKeyId: null,
      });
      expect(await cardPayment(booking.bookingId)).toMatchObject({ refundedCents: 600, status: 'succeeded' });
      expect(await eventsOf(booking.bookingId, 'refund.created')).toEqual([
        {
          ...common('refund.created', booking.bookingId),
          refund_id: recorded[0]!.id,
          payment_intent_id: booking.intent.id,
          amount_cents: 600,
          reason: null,
          status: 'succeeded',
        },
      ]);
      expect(await bookingStatus(booking.bookingId)).toBe('confirmed');

      const rest = (await t.deps.stripe!.refunds.create({
        payment_intent: booking.intent.id,
      })) as unknown as RefundObject;
      expect((await deliver(signedRefundEvent(rest, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

      expect(await bookingStatus(booking.bookingId)).toBe('refunded');
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 2);
      expect(await eventsOf(booking.bookingId, 'refund.created')).toHaveLength(2);
      expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([
        {
          ...common('booking.refunded', booking.bookingId),
          ...(await subject(booking.bookingId)),
          amount_cents: booking.paidCents,
        },
      ]);
    });

    it('when a dashboard refund is reported before the payment it refunds was recorded, then it is answered 503 and recorded once the payment is, and the booking ends refunded', async () => {
      const booked = await createBooking(t, demo, {});
      const pi = await request(t.app)
        .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
        .set('X-Forwarded-For', booked.ip)
        .set('X-Booking-Token', booked.booking_token);
      expect(pi.status).toBe(200);
      const intent = fake.succeed((pi.body.client_secret as string).split('_secret_')[0]!);
      // The payment's notification has not been handled (it failed and waits for redelivery)
      // when staff refund the charge in full in the dashboard.
      const dashboard = (await t.deps.stripe!.refunds.create({ payment_intent: intent.id })) as unknown as RefundObject;
      const charge = signedChargeRefundedEvent(intent, [dashboard], { secret: TEST_WEBHOOK_SECRET });

      const early = await deliver(charge);

      expect([early.status, early.body.error]).toEqual([503, 'service_unavailable']);
      expect(await t.deps.db.providerEvent.count({ where: { id: charge.event.id } })).toBe(0);

      expect((await deliver(signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);
      expect(await bookingStatus(booked.booking_id)).toBe('confirmed');
      expect((await deliver(charge)).status).toBe(200);

      expect(await t.deps.db.refund.findMany({ where: { bookingId: booked.booking_id } })).toEqual([
        expect.objectContaining({ providerRefundId: dashboard.id, amountCents: intent.amount, status: 'succeeded' }),
      ]);
      expect(await bookingStatus(booked.booking_id)).toBe('refunded');
      expect(await eventsOf(booked.booking_id, 'booking.refunded')).toHaveLength(1);
    });

    it('when the paid amount was reissued as a gift card and the payment is then refunded in the dashboard, then the refund is recorded, the booking stays cancelled and is flagged', async () => {
      const booking = await cardBooking(demo, { slotIndex: 5 });
      const reissued = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/reissue-gift-card`)
        .set('Authorization', bearer(demo.api_keys.manager));
      expect(reissued.status).toBe(200);
      const dashboard = (await t.deps.stripe!.refunds.create({
        payment_intent: booking.intent.id,
      })) as unknown as RefundObject;

      expect((await deliver(signedRefundEvent(dashboard, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

      const row = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } });
      expect(row).toMatchObject({ status: 'cancelled', reviewReason: 'refunded_after_reissue' });
      // The money did move: recorded with refund.created; the booking did not become refunded.
      expect(await eventsOf(booking.bookingId, 'refund.created')).toHaveLength(1);
      expect(await eventsOf(booking.bookingId, 'booking.refunded')).toEqual([]);
    });

    it('when a refund event carries a bad signature, then it is 400 invalid_signature and nothing is recorded', async () => {
      const booking = await cardBooking(demo);
      const dashboard = (await t.deps.stripe!.refunds.create({
        payment_intent: booking.intent.id,
        amount: 300,
      })) as unknown as RefundObject;

      const res = await deliver({
        ...signedRefundEvent(dashboard, { secret: 'whsec_someone_else' }),
      });

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_signature');
      expect(await t.deps.db.refund.count({ where: { bookingId: booking.bookingId } })).toBe(0);
    });
  });
});
