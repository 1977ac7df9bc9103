import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import {
  bearer,
  clientIp,
  createBooking,
  createTestApp,
  type CreatedBooking,
  deliverStripeEvent,
  type FakePaymentIntent,
  type FakeRefund,
  type FakeStripe,
  holdExpired,
  kayak,
  placeHold,
  seedTenant,
  signedChargeRefundedEvent,
  signedPaymentSucceededEvent,
  signedRefundEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
} from '@booking/test-kit';

// A PaymentIntent naming a held booking (metadata.booking_id) is not always the one our API made
// for what the booking owes: one made in Stripe's dashboard, or by another integration on the
// account, can carry any amount and currency. A payment that does not cover the booking confirms
// nothing: it is recorded once and refunded automatically, and the booking stays held, with its
// hold, for the customer to pay the right amount. The app's real Stripe SDK talks to the fake
// Stripe; PostgreSQL and Redis are real.

describe('a card payment that does not cover what its held booking owes', () => {
  let fake: FakeStripe;
  let t: TestApp;
  /** Holds of a second: a booking made through it can be paid after its hold ran out. */
  let shortHolds: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url));
    shortHolds = createTestApp({ ...stripeEnv(fake.url), HOLD_TTL_SECONDS: '1' });
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
    await shortHolds?.close();
    await stopFakeStripe(fake);
  });

  const deliver = (signed: { payload: string; signature: string }) => deliverStripeEvent(t, signed);
  const bookingRow = (bookingId: string) => t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } });
  const owedCents = async (bookingId: string) => {
    const booking = await bookingRow(bookingId);
    return booking.totalCents - booking.giftCardAppliedCents;
  };
  const paymentOf = (intentId: string) =>
    t.deps.db.payment.findUniqueOrThrow({ where: { providerReference: intentId } });
  const refundRows = (bookingId: string) =>
    t.deps.db.refund.findMany({ where: { bookingId }, orderBy: { createdAt: 'asc' } });
  const refundRequestsFor = (intentId: string) =>
    fake.requestsTo('POST', '/v1/refunds').filter((r) => r.body.payment_intent === intentId);
  const eventNames = async (bookingId: string) =>
    (await t.deps.db.event.findMany({ where: { entityId: bookingId }, orderBy: { createdAt: 'asc' } })).map(
      (event) => event.name,
    );
  const liveSeats = async (slotId: string) => (await t.deps.holds.liveSeats([slotId])).get(slotId) ?? 0;

  /** A held booking of two on a kayak slot, optionally paid in part by a gift card. */
  async function heldBooking(giftCardCode?: string): Promise<CreatedBooking> {
    const { experience, slot } = kayak(demo);
    const booked = await createBooking(t, demo, { experience, slotId: slot.id, guests: 2, giftCardCode });
    expect((await bookingRow(booked.booking_id)).status).toBe('held');
    return booked;
  }

  /** An intent made outside our API (Stripe's dashboard) naming the booking, paid, as its signed event. */
  async function paidOutside(bookingId: string, amount: number, currency: string) {
    const made = await t.deps.stripe!.paymentIntents.create({ amount, currency, metadata: { booking_id: bookingId } });
    const intent = fake.succeed(made.id);
    return { intent, paid: signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }) };
  }

  /**
   * The operator refunds the payment in Stripe's dashboard; Stripe's charge.refunded lists that
   * refund with the ones that failed before it. The notification's answer.
   */
  async function refundInDashboard(intent: FakePaymentIntent) {
    const failedRefunds = await t.deps.stripe!.refunds.list({ payment_intent: intent.id });
    const dashboard = await t.deps.stripe!.refunds.create({ payment_intent: intent.id });
    return deliver(
      signedChargeRefundedEvent(intent, [dashboard as FakeRefund, ...(failedRefunds.data as FakeRefund[])], {
        secret: TEST_WEBHOOK_SECRET,
      }),
    );
  }

  /** Pays what the booking owes through our API's own PaymentIntent. */
  async function payTheRightAmount(booked: CreatedBooking) {
    const pi = await request(t.app)
      .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
      .set('X-Forwarded-For', booked.ip)
      .set('X-Booking-Token', booked.booking_token);
    expect(pi.status).toBe(200);
    const intent = fake.succeed((pi.body.client_secret as string).split('_secret_')[0]!);
    expect((await deliver(signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);
    return intent;
  }

  /** Pays `amountCents` for the booking in cash at the till (one shift, opened at the first payment). */
  let shiftId: string | undefined;
  async function payCash(bookingId: string, amountCents: number) {
    if (!shiftId) {
      const shift = await request(t.app)
        .post('/api/pos/shifts/open')
        .set('Authorization', bearer(demo.api_keys.staff))
        .send({ starting_cash_cents: 0 });
      expect(shift.status).toBe(201);
      shiftId = shift.body.shift_id as string;
    }
    return request(t.app)
      .post(`/api/pos/shifts/${shiftId}/cash-payments`)
      .set('Authorization', bearer(demo.api_keys.staff))
      .send({ booking_id: bookingId, amount_cents: amountCents });
  }

  it('when an intent for less than owed succeeds, then the payment is recorded and refunded once, the held booking keeps its hold and gift card part, and the right payment then confirms it', async () => {
    const small = demo.gift_cards.find((card) => card.balance_cents === 500)!;
    const giftCardBalance = async () =>
      (
        await t.deps.db.giftCard.findFirstOrThrow({
          where: { tenantId: demo.tenant.id, codeLast4: small.code.slice(-4) },
        })
      ).balanceCents;
    const booked = await heldBooking(small.code);
    const owed = await owedCents(booked.booking_id);
    const seatsHeld = await liveSeats(booked.slotId);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');

    const replies = [await deliver(short.paid), await deliver(short.paid)];

    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'held',
      reviewReason: 'payment_amount_mismatch',
      giftCardAppliedCents: 500,
    });
    // Its gift card part still pays for it: nothing went back on the card.
    expect(await giftCardBalance()).toBe(0);
    // Its hold is untouched: the seats are still the booking's.
    expect(await liveSeats(booked.slotId)).toBe(seatsHeld);
    expect(await paymentOf(short.intent.id)).toMatchObject({
      amountCents: owed - 100,
      currency: 'USD',
      mismatched: true,
      refundDue: false,
      status: 'refunded',
      refundedCents: owed - 100,
    });
    // Refunded once, however often Stripe delivers the payment.
    expect(refundRequestsFor(short.intent.id)).toHaveLength(1);
    expect(fake.refunds.filter((r) => r.payment_intent === short.intent.id)).toEqual([
      expect.objectContaining({
        amount: owed - 100,
        status: 'succeeded',
        metadata: expect.objectContaining({ automatic: 'true' }),
      }),
    ]);
    expect(await refundRows(booked.booking_id)).toEqual([
      expect.objectContaining({ automatic: true, status: 'succeeded', amountCents: owed - 100 }),
    ]);
    // The refund is announced; the booking neither refunded nor cancelled.
    expect(await eventNames(booked.booking_id)).toEqual(['booking.created', 'gift_card.redeemed', 'refund.created']);

    const right = await payTheRightAmount(booked);

    expect(right.amount).toBe(owed);
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'confirmed' });
    const [confirmed] = await t.deps.db.event.findMany({
      where: { entityId: booked.booking_id, name: 'booking.confirmed' },
    });
    expect(confirmed!.data).toMatchObject({ net_paid_cents: owed + 500 });
  });

  it('when an intent in another currency succeeds, then it is refunded once and the held booking stays held with its hold', async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const seatsHeld = await liveSeats(booked.slotId);
    const foreign = await paidOutside(booked.booking_id, owed, 'eur');

    const replies = [await deliver(foreign.paid), await deliver(foreign.paid)];

    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'held',
      reviewReason: 'payment_amount_mismatch',
    });
    expect(await liveSeats(booked.slotId)).toBe(seatsHeld);
    expect(await paymentOf(foreign.intent.id)).toMatchObject({
      amountCents: owed,
      currency: 'EUR',
      mismatched: true,
      status: 'refunded',
    });
    expect(refundRequestsFor(foreign.intent.id)).toHaveLength(1);
    expect(await eventNames(booked.booking_id)).toEqual(['booking.created', 'refund.created']);
  });

  it('when the refund call fails, then the webhook answers 5xx and the redelivery refunds it once', async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const short = await paidOutside(booked.booking_id, owed - 1, 'usd');
    // The SDK tries three times.
    fake.failNextRefunds(3);

    expect((await deliver(short.paid)).status).toBeGreaterThanOrEqual(500);
    expect(await paymentOf(short.intent.id)).toMatchObject({ mismatched: true, refundDue: true, status: 'succeeded' });
    expect((await deliver(short.paid)).status).toBe(200);
    expect((await deliver(short.paid)).status).toBe(200);

    expect(fake.refunds.filter((r) => r.payment_intent === short.intent.id)).toHaveLength(1);
    expect(await paymentOf(short.intent.id)).toMatchObject({ refundDue: false, status: 'refunded' });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'held' });
  });

  it('when Stripe answers pending, then the booking stays held with its hold (not waiting for the refund), and the notification that it succeeded changes only the payment', async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const seatsHeld = await liveSeats(booked.slotId);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    fake.answerNextRefunds('pending');

    expect((await deliver(short.paid)).status).toBe(200);

    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'held',
      reviewReason: 'payment_amount_mismatch',
    });
    expect(await liveSeats(booked.slotId)).toBe(seatsHeld);
    const made = fake.refunds.find((r) => r.payment_intent === short.intent.id)!;
    const settled = { ...made, status: 'succeeded' as const };
    fake.refunds[fake.refunds.indexOf(made)] = settled;

    expect((await deliver(signedRefundEvent(settled, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'refunded', refundedCents: owed - 100 });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'held' });
    expect(await liveSeats(booked.slotId)).toBe(seatsHeld);
    expect(await eventNames(booked.booking_id)).toEqual(['booking.created', 'refund.created']);
  });

  it('when Stripe answers the refund failed, then the held booking is flagged but neither cancelled nor unheld, and an operator refund of that payment leaves it held and clears the flag', async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const seatsHeld = await liveSeats(booked.slotId);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    fake.answerNextRefunds('failed');

    expect((await deliver(short.paid)).status).toBe(200);

    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'held',
      reviewReason: 'automatic_refund_failed',
    });
    expect(await liveSeats(booked.slotId)).toBe(seatsHeld);
    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'succeeded', refundDue: false, refundedCents: 0 });
    expect(await eventNames(booked.booking_id)).toEqual(['booking.created']);
    // Operators see the payment, marked, but it is not counted as paying for the booking.
    const shown = await request(t.app)
      .get(`/api/bookings/${booked.booking_id}`)
      .set('Authorization', bearer(demo.api_keys.staff));
    expect(shown.status).toBe(200);
    expect(shown.body.paid_cents).toBe(0);
    expect(shown.body.payments).toEqual([
      expect.objectContaining({ amount_cents: owed - 100, currency: 'USD', status: 'succeeded', mismatched: true }),
    ]);

    const refunded = await request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: booked.booking_id });

    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({ status: 'succeeded', amount_cents: owed - 100, booking_status: 'held' });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'held', reviewReason: null });
    expect(await liveSeats(booked.slotId)).toBe(seatsHeld);
    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'refunded', refundedCents: owed - 100 });
    expect(await eventNames(booked.booking_id)).toEqual(['booking.created', 'refund.created']);
  });

  it('when a short payment whose refund failed is followed by the right one, then an operator refund of the booking gives back the right one and the flag stays until the short one is given back in the dashboard', async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    fake.answerNextRefunds('failed');
    expect((await deliver(short.paid)).status).toBe(200);
    const right = await payTheRightAmount(booked);
    // The flag telling an operator that money is still to give back outlives the confirmation.
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'confirmed',
      reviewReason: 'automatic_refund_failed',
    });

    const refunded = await request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: booked.booking_id });

    // The booking's refund is of the money that paid for it; the short payment's is still kept.
    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({
      status: 'succeeded',
      payment_intent_id: right.id,
      amount_cents: owed,
      booking_status: 'refunded',
      refunded_total_cents: owed,
    });
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'refunded',
      reviewReason: 'automatic_refund_failed',
    });
    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'succeeded', refundedCents: 0 });

    // The operator gives the short payment back in Stripe's dashboard: recorded, and the flag clears.
    const notified = await refundInDashboard(short.intent);
    expect(notified.status).toBe(200);
    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'refunded', refundedCents: owed - 100 });
    expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'refunded', reviewReason: null });
  });

  it("when a short payment's refund failed, then the held booking can still be paid in cash, and the flag stays until that money is back", async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    fake.answerNextRefunds('failed');
    expect((await deliver(short.paid)).status).toBe(200);
    expect((await bookingRow(booked.booking_id)).reviewReason).toBe('automatic_refund_failed');

    const cash = await payCash(booked.booking_id, owed);

    expect(cash.status).toBe(200);
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'confirmed',
      reviewReason: 'automatic_refund_failed',
    });
  });

  it("when a short payment's refund failed and the right payment then comes too late for the seats, then the flag stays automatic_refund_failed through that refund until the short one is back", async () => {
    const tenant = await seedTenant(t.deps);
    const { experience, slot } = kayak(tenant);
    const booked = await createBooking(shortHolds, tenant, { experience, slotId: slot.id, guests: 2 });
    const owed = await owedCents(booked.booking_id);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    fake.answerNextRefunds('failed');
    expect((await deliver(short.paid)).status).toBe(200);
    expect((await bookingRow(booked.booking_id)).reviewReason).toBe('automatic_refund_failed');
    // The hold runs out and the slot sells out; the customer then pays the right amount.
    const { holdExpiresAt } = await bookingRow(booked.booking_id);
    await holdExpired(t, holdExpiresAt.getTime());
    await placeHold(t, clientIp(), experience, slot.id, 12);
    await placeHold(t, clientIp(), experience, slot.id, 12);
    const late = await paidOutside(booked.booking_id, owed, 'usd');
    fake.answerNextRefunds('pending');

    expect((await deliver(late.paid)).status).toBe(200);

    // The late payment's refund is under way, but the short one's money is still kept.
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'held',
      reviewReason: 'automatic_refund_failed',
    });
    const [pending] = (await t.deps.stripe!.refunds.list({ payment_intent: late.intent.id })).data;
    const succeeded = { ...(pending as FakeRefund), status: 'succeeded' } as FakeRefund;
    expect((await deliver(signedRefundEvent(succeeded, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'refunded',
      reviewReason: 'automatic_refund_failed',
    });
    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'succeeded', refundedCents: 0 });
  });

  it("when a short payment comes while a late payment's refund is under way, then the booking keeps that refund's flag", async () => {
    const tenant = await seedTenant(t.deps);
    const { experience, slot } = kayak(tenant);
    const booked = await createBooking(shortHolds, tenant, { experience, slotId: slot.id, guests: 2 });
    const owed = await owedCents(booked.booking_id);
    const { holdExpiresAt } = await bookingRow(booked.booking_id);
    await holdExpired(t, holdExpiresAt.getTime());
    await placeHold(t, clientIp(), experience, slot.id, 12);
    await placeHold(t, clientIp(), experience, slot.id, 12);
    const late = await paidOutside(booked.booking_id, owed, 'usd');
    fake.answerNextRefunds('pending');
    expect((await deliver(late.paid)).status).toBe(200);
    expect((await bookingRow(booked.booking_id)).reviewReason).toBe('payment_refund_pending');

    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    expect((await deliver(short.paid)).status).toBe(200);

    expect(await paymentOf(short.intent.id)).toMatchObject({ mismatched: true, status: 'refunded' });
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'held',
      reviewReason: 'payment_refund_pending',
    });
  });

  it("when a booking was reissued as a gift card and a short payment's failed refund is then given back in the dashboard, then its flag clears", async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    fake.answerNextRefunds('failed');
    expect((await deliver(short.paid)).status).toBe(200);
    await payTheRightAmount(booked);
    expect(await bookingRow(booked.booking_id)).toMatchObject({
      status: 'confirmed',
      reviewReason: 'automatic_refund_failed',
    });
    const reissued = await request(t.app)
      .post(`/api/bookings/${booked.booking_id}/reissue-gift-card`)
      .set('Authorization', bearer(demo.api_keys.manager));
    expect(reissued.status).toBe(200);

    const notified = await refundInDashboard(short.intent);

    expect(notified.status).toBe(200);
    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'refunded', refundedCents: owed - 100 });
    expect((await bookingRow(booked.booking_id)).reviewReason).toBeNull();
  });

  it('when a short payment was refunded, then the held booking can still be paid in cash at the till', async () => {
    const booked = await heldBooking();
    const owed = await owedCents(booked.booking_id);
    const short = await paidOutside(booked.booking_id, owed - 100, 'usd');
    expect((await deliver(short.paid)).status).toBe(200);
    expect(await paymentOf(short.intent.id)).toMatchObject({ status: 'refunded' });
    const cash = await payCash(booked.booking_id, owed);

    expect(cash.status).toBe(200);
    expect((await bookingRow(booked.booking_id)).status).toBe('confirmed');
  });

  it('when intents made outside our API pay too little and then exactly what is owed, or more, then the one that covers it confirms the booking', async () => {
    const exact = await heldBooking();
    const more = await heldBooking();
    const shortPaid = await paidOutside(exact.booking_id, (await owedCents(exact.booking_id)) - 100, 'usd');
    const exactPaid = await paidOutside(exact.booking_id, await owedCents(exact.booking_id), 'usd');
    const morePaid = await paidOutside(more.booking_id, (await owedCents(more.booking_id)) + 100, 'usd');

    expect((await deliver(shortPaid.paid)).status).toBe(200);
    expect(await bookingRow(exact.booking_id)).toMatchObject({ status: 'held' });
    expect((await deliver(exactPaid.paid)).status).toBe(200);
    expect((await deliver(morePaid.paid)).status).toBe(200);

    for (const [booked, paid] of [
      [exact, exactPaid],
      [more, morePaid],
    ] as const) {
      expect(await bookingRow(booked.booking_id)).toMatchObject({ status: 'confirmed' });
      expect(await paymentOf(paid.intent.id)).toMatchObject({
        mismatched: false,
        refundDue: false,
        status: 'succeeded',
      });
      expect(refundRequestsFor(paid.intent.id)).toHaveLength(0);
    }
  });
});
