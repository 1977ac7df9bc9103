import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { signToken } from '@booking/signing';
import {
  clientIp,
  createBooking,
  type CreatedBooking,
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  holdExpired,
  kayak,
  placeHold,
  seedTenant,
  type SignedEvent,
  signedPaymentSucceededEvent,
  signEvent,
  sleep,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
} from '@booking/test-kit';

// The app's real Stripe SDK talks to a fake Stripe on 127.0.0.1; inbound events are signed with
// the SDK's own test helper. PostgreSQL and Redis are real.

const WEBHOOK_SECRET = 'whsec_test';

function paymentIntent(t: TestApp, bookingId: string, token: string | undefined, ip = clientIp()) {
  const req = request(t.app).post(`/api/embed/bookings/${bookingId}/payment-intent`).set('X-Forwarded-For', ip);
  return token === undefined ? req : req.set('X-Booking-Token', token);
}

/** Creates the booking's PaymentIntent through the API, has the fake mark it paid, and signs the event. */
async function paidEvent(t: TestApp, fake: FakeStripe, booked: CreatedBooking): Promise<SignedEvent> {
  const res = await paymentIntent(t, booked.booking_id, booked.booking_token);
  if (res.status !== 200) throw new Error(`payment intent failed: ${res.status} ${JSON.stringify(res.body)}`);
  const intentId = (res.body.client_secret as string).split('_secret_')[0]!;
  return signedPaymentSucceededEvent(fake.succeed(intentId), { secret: WEBHOOK_SECRET });
}

/** Everything a payment can change, to compare before and after a delivery. */
async function paymentState(t: TestApp, bookingId: string, slotId: string) {
  const [booking, payments, events, slot, live] = await Promise.all([
    t.deps.db.booking.findUniqueOrThrow({
      where: { id: bookingId },
      select: { status: true, reviewReason: true, paymentIntentId: true },
    }),
    t.deps.db.payment.findMany({
      where: { bookingId },
      select: { id: true, method: true, status: true, amountCents: true },
      orderBy: { createdAt: 'asc' },
    }),
    t.deps.db.event.findMany({
      where: { entityId: bookingId },
      select: { id: true, name: true },
      orderBy: { createdAt: 'asc' },
    }),
    t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId }, select: { seatsBooked: true, capacity: true } }),
    t.deps.holds.liveSeats([slotId]),
  ]);
  return { booking, payments, events, slot, liveSeats: live.get(slotId) ?? 0 };
}

describe('payments', () => {
  let fake: FakeStripe;
  let t: TestApp;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url, WEBHOOK_SECRET));
  });
  afterAll(async () => {
    await t?.close();
    await stopFakeStripe(fake);
  });

  describe('POST /api/embed/bookings/{id}/payment-intent', () => {
    let demo: DemoTenant;
    beforeEach(async () => {
      demo = await seedTenant(t.deps);
    });

    it('when the booking is held, then it creates one PaymentIntent for the total and a retry gets the same one', async () => {
      const { experience, peakSlot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: peakSlot.id, guests: 2 });

      const res = await paymentIntent(t, booked.booking_id, booked.booking_token);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        client_secret: expect.stringMatching(/^pi_\w+_secret_\w+$/),
        publishable_key: 'pk_test_x',
        amount_cents: 6750 * 2,
        currency: 'USD',
      });
      const created = fake
        .requestsTo('POST', '/v1/payment_intents')
        .filter((r) => (r.body.metadata as Record<string, string>).booking_id === booked.booking_id);
      expect(created).toHaveLength(1);
      expect(created[0]!.body).toEqual({
        amount: String(6750 * 2),
        currency: 'usd',
        allowed_payment_method_types: { 0: 'card' },
        metadata: { booking_id: booked.booking_id, tenant_id: demo.tenant.id },
      });
      expect(created[0]!.idempotencyKey).toEqual(expect.any(String));
      const intentId = (res.body.client_secret as string).split('_secret_')[0]!;
      expect(fake.intents.get(intentId)).toMatchObject({
        amount: 13500,
        currency: 'usd',
        payment_method_types: ['card'],
        metadata: { booking_id: booked.booking_id },
      });
      const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
      expect(booking.paymentIntentId).toBe(intentId);

      const retry = await paymentIntent(t, booked.booking_id, booked.booking_token);

      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(res.body);
      expect([...fake.intents.values()].filter((i) => i.metadata.booking_id === booked.booking_id)).toHaveLength(1);
      expect(fake.requestsTo('GET', `/v1/payment_intents/${intentId}`)).toHaveLength(1);
    });

    it('when several requests for one booking race, then they all get the same client_secret and Stripe holds one intent', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });

      const replies = await Promise.all(
        Array.from({ length: 5 }, () => paymentIntent(t, booked.booking_id, booked.booking_token)),
      );

      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(new Set(replies.map((r) => r.body.client_secret)).size).toBe(1);
      expect([...fake.intents.values()].filter((i) => i.metadata.booking_id === booked.booking_id)).toHaveLength(1);
      const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
      expect(replies[0]!.body.client_secret).toMatch(new RegExp(`^${booking.paymentIntentId}_secret_`));
    });

    it('when an Idempotency-Key is repeated, then the stored answer is replayed without calling Stripe, to its booking token only', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      const other = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      const ip = clientIp();
      const key = `pi-${randomUUID()}`;

      const first = await paymentIntent(t, booked.booking_id, booked.booking_token, ip).set('Idempotency-Key', key);
      const stripeCalls = fake.requests.length;
      const again = await paymentIntent(t, booked.booking_id, booked.booking_token, ip).set('Idempotency-Key', key);
      const noToken = await request(t.app)
        .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
        .set('X-Forwarded-For', ip)
        .set('Idempotency-Key', key);
      const othersToken = await paymentIntent(t, booked.booking_id, other.booking_token, ip).set(
        'Idempotency-Key',
        key,
      );

      expect(first.status).toBe(200);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      // Authentication comes before the replay: the stored client secret needs the booking's token.
      expect(noToken.status).toBe(401);
      expect(noToken.body).toEqual({ error: 'invalid_token', detail: 'X-Booking-Token is required' });
      expect(othersToken.status).toBe(401);
      expect(JSON.stringify([noToken.body, othersToken.body])).not.toContain(first.body.client_secret);
      expect(fake.requests.length).toBe(stripeCalls);

      // The same key with another booking's own token is that booking's request, not a replay.
      const elsewhere = await paymentIntent(t, other.booking_id, other.booking_token, ip).set('Idempotency-Key', key);
      expect(elsewhere.status).toBe(200);
      expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
      expect(elsewhere.body.client_secret).not.toBe(first.body.client_secret);
    });

    it('when the token is missing, tampered with or for another booking, then it is 401 invalid_token', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      const other = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      const [version, payload, mac] = booked.booking_token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp: number };
      const longerLived = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 86_400 })).toString('base64url');
      const checkInToken = signToken(t.deps.config.tokenSigningSecret, 'check_in', {
        subject: booked.booking_id,
        tenantId: demo.tenant.id,
        ttlSeconds: 600,
      });
      const otherSecret = signToken('another-secret-of-at-least-32-characters!', 'booking', {
        subject: booked.booking_id,
        tenantId: demo.tenant.id,
        ttlSeconds: 600,
      });
      const stripeCalls = fake.requests.length;

      for (const token of [
        undefined,
        '',
        'garbage',
        `${version}.${longerLived}.${mac}`,
        other.booking_token,
        checkInToken,
        otherSecret,
      ]) {
        const res = await paymentIntent(t, booked.booking_id, token);
        expect({ token, status: res.status, error: res.body.error }).toEqual({
          token,
          status: 401,
          error: 'invalid_token',
        });
      }
      expect(fake.requests.length).toBe(stripeCalls);
    });

    it('when the token has expired, then it is 401 token_expired', async () => {
      const short = createTestApp({ ...stripeEnv(fake.url, WEBHOOK_SECRET), BOOKING_TOKEN_TTL_SECONDS: '1' });
      try {
        const own = await seedTenant(short.deps);
        const { experience, slot } = kayak(own);
        const booked = await createBooking(short, own, { experience, slotId: slot.id, guests: 1 });
        // A token's expiry is only a time, with nothing to wait on: let it pass. It has one-second
        // resolution, so the token is dead at most a second after issue.
        await sleep(1100);

        const res = await paymentIntent(short, booked.booking_id, booked.booking_token);

        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'token_expired' });
      } finally {
        await short.close();
      }
    });

    it("when no such booking exists in the token's tenant, then it is 404 booking_not_found", async () => {
      const secret = t.deps.config.tokenSigningSecret;
      const unknown = randomUUID();
      const forUnknown = signToken(secret, 'booking', { subject: unknown, tenantId: demo.tenant.id, ttlSeconds: 600 });
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      const elsewhere = await seedTenant(t.deps);
      const wrongTenant = signToken(secret, 'booking', {
        subject: booked.booking_id,
        tenantId: elsewhere.tenant.id,
        ttlSeconds: 600,
      });

      const missing = await paymentIntent(t, unknown, forUnknown);
      const foreign = await paymentIntent(t, booked.booking_id, wrongTenant);
      const notUuid = await paymentIntent(t, 'not-a-uuid', forUnknown);

      for (const res of [missing, foreign, notUuid]) {
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('booking_not_found');
      }
    });

    it('when the booking is confirmed, cancelled or refunded, then it is 409 booking_not_payable', async () => {
      const { experience, slot } = kayak(demo);
      const paid = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      await deliverStripeEvent(t, await paidEvent(t, fake, paid)).expect(200);
      const cancelled = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      await request(t.app)
        .post(`/api/bookings/${cancelled.booking_id}/cancel`)
        .set('Authorization', `Bearer ${demo.api_keys.manager}`)
        .expect(200);
      const refunded = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      await t.deps.db.booking.update({ where: { id: refunded.booking_id }, data: { status: 'refunded' } });
      const stripeCalls = fake.requests.length;

      for (const booked of [paid, cancelled, refunded]) {
        const res = await paymentIntent(t, booked.booking_id, booked.booking_token);
        expect(res.status).toBe(409);
        expect(res.body.error).toBe('booking_not_payable');
      }
      expect(fake.requests.length).toBe(stripeCalls);
    });

    it('when no Stripe key is configured, then it is 503 payments_not_configured', async () => {
      const unpaid = createTestApp({
        STRIPE_SECRET_KEY: '',
        STRIPE_PUBLISHABLE_KEY: '',
        STRIPE_WEBHOOK_SECRET: '',
        STRIPE_API_BASE: '',
      });
      try {
        expect(unpaid.deps.stripe).toBeNull();
        const { experience, slot } = kayak(demo);
        const booked = await createBooking(unpaid, demo, { experience, slotId: slot.id, guests: 1 });

        const res = await paymentIntent(unpaid, booked.booking_id, booked.booking_token);
        const hook = await deliverStripeEvent(
          unpaid,
          signEvent(
            { id: `evt_${randomUUID()}`, type: 'payment_intent.succeeded', data: { object: { id: 'pi_x' } } },
            { secret: WEBHOOK_SECRET },
          ),
        );

        expect(res.status).toBe(503);
        expect(res.body.error).toBe('payments_not_configured');
        expect(hook.status).toBe(503);
        expect(hook.body.error).toBe('payments_not_configured');
      } finally {
        await unpaid.close();
      }
    });
  });

  describe('POST /api/payments/stripe/webhook', () => {
    let demo: DemoTenant;
    beforeEach(async () => {
      demo = await seedTenant(t.deps);
    });

    it('when the signature does not match, then it is 400 invalid_signature and nothing changes', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 2 });
      const signed = await paidEvent(t, fake, booked);
      const before = await paymentState(t, booked.booking_id, slot.id);
      const wrongSecret = signEvent(signed.event, { secret: 'whsec_other' });
      // Older than the SDK's five-minute tolerance: a captured delivery replayed later.
      const stale = signEvent(signed.event, {
        secret: WEBHOOK_SECRET,
        timestamp: Math.floor(Date.now() / 1000) - 3600,
      });

      for (const attempt of [
        { payload: signed.payload, signature: wrongSecret.signature },
        { payload: signed.payload.replace('"livemode":false', '"livemode":true'), signature: signed.signature },
        { payload: signed.payload, signature: '' },
        { payload: signed.payload, signature: 'garbage' },
        wrongSecret,
        stale,
      ]) {
        const res = await deliverStripeEvent(t, attempt);
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_signature');
      }
      expect(await paymentState(t, booked.booking_id, slot.id)).toEqual(before);
    });

    it('when payment_intent.succeeded arrives, then the booking is confirmed with its payment, seats and booking.confirmed event', async () => {
      const { experience, peakSlot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: peakSlot.id, guests: 3 });
      const signed = await paidEvent(t, fake, booked);
      const intent = signed.event.data.object;
      expect((await t.deps.holds.liveSeats([peakSlot.id])).get(peakSlot.id)).toBe(3);

      const res = await deliverStripeEvent(t, signed);

      expect(res.status).toBe(200);
      const state = await paymentState(t, booked.booking_id, peakSlot.id);
      expect(state.booking).toEqual({ status: 'confirmed', reviewReason: null, paymentIntentId: intent.id });
      expect(state.payments).toEqual([
        { id: expect.any(String), method: 'card', status: 'succeeded', amountCents: 6750 * 3 },
      ]);
      const payment = await t.deps.db.payment.findUniqueOrThrow({ where: { id: state.payments[0]!.id } });
      expect(payment).toMatchObject({ providerReference: intent.id, currency: 'USD', tenantId: demo.tenant.id });
      expect(state.slot.seatsBooked).toBe(3);
      expect(state.liveSeats).toBe(0);
      expect((await t.deps.holds.read(booked.holdId)).hold).toBeNull();

      const confirmed = await t.deps.db.event.findMany({
        where: { entityId: booked.booking_id, name: 'booking.confirmed' },
      });
      expect(confirmed).toHaveLength(1);
      expect(confirmed[0]).toMatchObject({ tenantId: demo.tenant.id, entityType: 'booking', schemaVersion: 2 });
      expect(confirmed[0]!.data).toEqual({
        event_id: confirmed[0]!.id,
        schema_version: 2,
        entity_type: 'booking',
        entity_id: booked.booking_id,
        booking_id: booked.booking_id,
        experience_id: experience.id,
        venue_id: demo.venue_id,
        slot_id: peakSlot.id,
        customer_email: `guest-${booked.holdId.slice(-12)}@example.com`,
        order_id: booked.booking_id,
        is_primary_booking: true,
        charge_amount_cents: 6750 * 3,
        currency: 'USD',
        method: 'card',
        net_paid_cents: 6750 * 3,
      });
      expect(await t.deps.db.providerEvent.findUnique({ where: { id: signed.event.id } })).toMatchObject({
        type: 'payment_intent.succeeded',
      });
    });

    it('when the same event is delivered again, then it answers 200 and nothing changes', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 2 });
      const signed = await paidEvent(t, fake, booked);
      await deliverStripeEvent(t, signed).expect(200);
      const after = await paymentState(t, booked.booking_id, slot.id);

      const replays = [];
      for (let i = 0; i < 3; i++) replays.push((await deliverStripeEvent(t, signed)).status);

      expect(replays).toEqual([200, 200, 200]);
      expect(await paymentState(t, booked.booking_id, slot.id)).toEqual(after);
      expect(after.booking.status).toBe('confirmed');
      expect(after.slot.seatsBooked).toBe(2);
    });

    it('when the same event is delivered several times at once, then the booking is confirmed once, with one payment and one event', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 4 });
      const signed = await paidEvent(t, fake, booked);

      const replies = await Promise.all(Array.from({ length: 6 }, () => deliverStripeEvent(t, signed)));

      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const state = await paymentState(t, booked.booking_id, slot.id);
      expect(state.booking.status).toBe('confirmed');
      expect(state.payments).toHaveLength(1);
      expect(state.events.map((e) => e.name).sort()).toEqual(['booking.confirmed', 'booking.created']);
      expect(state.slot.seatsBooked).toBe(4);
      expect(state.liveSeats).toBe(0);
    });

    it('when two different events for one PaymentIntent race, then the payment is still recorded once', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 2 });
      const first = await paidEvent(t, fake, booked);
      const second = signedPaymentSucceededEvent(fake.succeed(first.event.data.object.id), { secret: WEBHOOK_SECRET });
      expect(second.event.id).not.toBe(first.event.id);

      const replies = await Promise.all([
        deliverStripeEvent(t, first),
        deliverStripeEvent(t, second),
        deliverStripeEvent(t, first),
        deliverStripeEvent(t, second),
      ]);

      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const state = await paymentState(t, booked.booking_id, slot.id);
      expect(state.payments).toHaveLength(1);
      expect(state.events.filter((e) => e.name === 'booking.confirmed')).toHaveLength(1);
      expect(state.slot.seatsBooked).toBe(2);
    });

    it('when the event is not a payment success or names no booking, then it answers 200 and changes nothing', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      const signed = await paidEvent(t, fake, booked);
      const before = await paymentState(t, booked.booking_id, slot.id);
      const intent = signed.event.data.object;

      const failed = await deliverStripeEvent(
        t,
        signEvent(
          { ...signed.event, id: `evt_${randomUUID()}`, type: 'payment_intent.payment_failed' },
          { secret: WEBHOOK_SECRET },
        ),
      );
      const noBooking = await deliverStripeEvent(
        t,
        signEvent(
          { ...signed.event, id: `evt_${randomUUID()}`, data: { object: { ...intent, metadata: {} } } },
          { secret: WEBHOOK_SECRET },
        ),
      );

      expect(failed.status).toBe(200);
      expect(noBooking.status).toBe(200);
      expect(await paymentState(t, booked.booking_id, slot.id)).toEqual(before);
    });

    it('when a payment names a booking id that is not a uuid (another system on the account), then it answers 200 and changes nothing', async () => {
      const { experience, slot } = kayak(demo);
      const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 1 });
      const signed = await paidEvent(t, fake, booked);
      const before = await paymentState(t, booked.booking_id, slot.id);
      const intent = signed.event.data.object;

      const foreign = await deliverStripeEvent(
        t,
        signEvent(
          {
            ...signed.event,
            id: `evt_${randomUUID()}`,
            data: { object: { ...intent, metadata: { booking_id: 'BK-1234' } } },
          },
          { secret: WEBHOOK_SECRET },
        ),
      );

      expect(foreign.status).toBe(200);
      expect(await paymentState(t, booked.booking_id, slot.id)).toEqual(before);
    });

    describe('a payment that succeeds after its hold expired', () => {
      let short: TestApp;
      beforeAll(() => {
        short = createTestApp({ ...stripeEnv(fake.url, WEBHOOK_SECRET), HOLD_TTL_SECONDS: '1' });
      });
      afterAll(() => short?.close());

      /** A booking's refunds, oldest first. */
      const refundRows = (bookingId: string) =>
        t.deps.db.refund.findMany({ where: { bookingId }, orderBy: { createdAt: 'asc' } });

      /** A held booking whose one-second hold has run out (its seats are free for anyone again). */
      async function expiredBooking(
        own: DemoTenant,
        slotId: string,
        guests: number,
      ): Promise<{ booked: CreatedBooking; signed: SignedEvent }> {
        const { experience } = kayak(own);
        const booked = await createBooking(short, own, { experience, slotId: slotId, guests: guests });
        // The intent exists before the hold runs out: the customer was paying when it did.
        const signed = await paidEvent(short, fake, booked);
        const booking = await short.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
        await holdExpired(short, booking.holdExpiresAt.getTime());
        expect((await short.deps.holds.liveSeats([slotId])).get(slotId)).toBe(0);
        return { booked, signed };
      }

      it('when the seats were taken meanwhile, then the booking is refunded and marked for review, never oversold', async () => {
        const { experience, slot } = kayak(demo);
        const { booked, signed } = await expiredBooking(demo, slot.id, 2);
        const intent = signed.event.data.object;
        // Other customers (on a normal ten-minute hold) take every seat of the slot.
        await placeHold(t, clientIp(), experience, slot.id, 12);
        await placeHold(t, clientIp(), experience, slot.id, 12);

        const res = await deliverStripeEvent(t, signed);

        expect(res.status).toBe(200);
        const state = await paymentState(t, booked.booking_id, slot.id);
        expect(state.booking).toEqual({
          status: 'refunded',
          reviewReason: expect.any(String),
          paymentIntentId: intent.id,
        });
        expect(state.payments).toEqual([
          { id: expect.any(String), method: 'card', status: 'refunded', amountCents: intent.amount },
        ]);
        expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toEqual([
          expect.objectContaining({
            status: 'succeeded',
            amount: intent.amount,
            metadata: expect.objectContaining({ booking_id: booked.booking_id }),
          }),
        ]);
        // Money went back through Stripe: a refund like any other, and refund.created says so.
        expect(state.events.map((e) => e.name)).toEqual(['booking.created', 'refund.created', 'booking.refunded']);
        const [recorded, ...others] = await refundRows(booked.booking_id);
        expect(others).toEqual([]);
        expect(recorded).toMatchObject({
          automatic: true,
          status: 'succeeded',
          providerRefundId: fake.refunds.find((r) => r.payment_intent === intent.id)!.id,
          amountCents: intent.amount,
          reason: 'booking could not be confirmed',
          actorKeyId: null,
          keepBookingActive: false,
        });
        const created = await t.deps.db.event.findFirstOrThrow({
          where: { entityId: booked.booking_id, name: 'refund.created' },
        });
        expect(created.data).toEqual({
          event_id: created.id,
          schema_version: 1,
          entity_type: 'booking',
          entity_id: booked.booking_id,
          refund_id: recorded!.id,
          payment_intent_id: intent.id,
          amount_cents: intent.amount,
          reason: 'booking could not be confirmed',
          status: 'succeeded',
        });
        const refunded = await t.deps.db.event.findFirstOrThrow({
          where: { entityId: booked.booking_id, name: 'booking.refunded' },
        });
        expect(refunded.data).toMatchObject({
          booking_id: booked.booking_id,
          amount_cents: intent.amount,
          schema_version: 2,
          entity_type: 'booking',
        });
        expect(state.slot.seatsBooked).toBe(0);
        expect(state.slot.seatsBooked + state.liveSeats).toBeLessThanOrEqual(state.slot.capacity);
        expect(state.liveSeats).toBe(24);

        // And it stays that way: a redelivery neither refunds again nor confirms.
        await deliverStripeEvent(t, signed).expect(200);
        expect(await paymentState(t, booked.booking_id, slot.id)).toEqual(state);
        expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
        expect(await refundRows(booked.booking_id)).toEqual([recorded]);
        const again = await paymentIntent(t, booked.booking_id, booked.booking_token);
        expect(again.status).toBe(409);
        expect(again.body.error).toBe('booking_not_payable');
      });

      it('when the seats are still free, then the late payment confirms the booking', async () => {
        const { slot } = kayak(demo);
        const { booked, signed } = await expiredBooking(demo, slot.id, 3);

        const res = await deliverStripeEvent(t, signed);

        expect(res.status).toBe(200);
        const state = await paymentState(t, booked.booking_id, slot.id);
        expect(state.booking.status).toBe('confirmed');
        expect(state.booking.reviewReason).toBeNull();
        expect(state.payments).toEqual([expect.objectContaining({ method: 'card', status: 'succeeded' })]);
        expect(state.slot.seatsBooked).toBe(3);
        expect(state.events.map((e) => e.name)).toEqual(['booking.created', 'booking.confirmed']);
        expect(fake.refunds.filter((r) => r.payment_intent === signed.event.data.object.id)).toHaveLength(0);
      });

      it('when the automatic refund fails, then the webhook answers 5xx and a redelivery refunds exactly once', async () => {
        const { experience, slot } = kayak(demo);
        const { booked, signed } = await expiredBooking(demo, slot.id, 1);
        const intent = signed.event.data.object;
        await placeHold(t, clientIp(), experience, slot.id, 12);
        await placeHold(t, clientIp(), experience, slot.id, 12);
        // The SDK tries three times (maxNetworkRetries 2): fail them all.
        fake.failNextRefunds(3);

        const failed = await deliverStripeEvent(t, signed);

        expect(failed.status).toBeGreaterThanOrEqual(500);
        expect(
          fake
            .requestsTo('POST', '/v1/refunds')
            .filter((r) => r.body.payment_intent === intent.id)
            .map((r) => r.status),
        ).toEqual([500, 500, 500]);
        const pending = await paymentState(t, booked.booking_id, slot.id);
        expect(pending.booking.status).not.toBe('confirmed');
        expect(pending.booking.reviewReason).toEqual(expect.any(String));
        expect(pending.slot.seatsBooked).toBe(0);

        const redelivered = await deliverStripeEvent(t, signed);

        expect(redelivered.status).toBe(200);
        expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
        const state = await paymentState(t, booked.booking_id, slot.id);
        expect(state.booking.status).toBe('refunded');
        expect(state.payments).toEqual([expect.objectContaining({ status: 'refunded', amountCents: intent.amount })]);
        expect(state.events.filter((e) => e.name === 'booking.refunded')).toHaveLength(1);
        expect(state.events.filter((e) => e.name === 'refund.created')).toHaveLength(1);
        expect(state.slot.seatsBooked + state.liveSeats).toBeLessThanOrEqual(state.slot.capacity);

        await deliverStripeEvent(t, signed).expect(200);
        expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
        expect(await paymentState(t, booked.booking_id, slot.id)).toEqual(state);
        expect(await refundRows(booked.booking_id)).toEqual([expect.objectContaining({ status: 'succeeded' })]);
      });

      it('when a failed automatic refund is redelivered several times at once, then it is refunded and recorded once', async () => {
        const { experience, slot } = kayak(demo);
        const { booked, signed } = await expiredBooking(demo, slot.id, 1);
        const intent = signed.event.data.object;
        await placeHold(t, clientIp(), experience, slot.id, 12);
        await placeHold(t, clientIp(), experience, slot.id, 12);
        fake.failNextRefunds(3);
        expect((await deliverStripeEvent(t, signed)).status).toBeGreaterThanOrEqual(500);

        const replies = await Promise.all(Array.from({ length: 4 }, () => deliverStripeEvent(t, signed)));

        expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200]);
        expect(fake.refunds.filter((r) => r.payment_intent === intent.id)).toHaveLength(1);
        // Each asked Stripe; all but one were refused and found the refund made: recorded once.
        expect(
          fake.requestsTo('POST', '/v1/refunds').filter((r) => r.body.payment_intent === intent.id && r.status === 200),
        ).toHaveLength(1);
        expect(await refundRows(booked.booking_id)).toEqual([
          expect.objectContaining({ automatic: true, status: 'succeeded' }),
        ]);
        const state = await paymentState(t, booked.booking_id, slot.id);
        expect(state.booking.status).toBe('refunded');
        expect(state.payments).toEqual([expect.objectContaining({ status: 'refunded' })]);
        expect(state.events.filter((e) => e.name === 'booking.refunded')).toHaveLength(1);
        expect(state.events.filter((e) => e.name === 'refund.created')).toHaveLength(1);
      });
    });
  });
});
