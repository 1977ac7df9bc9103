import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS, type EventName } from '@booking/events';
import {
  bearer,
  clientIp,
  createBooking,
  createTestApp,
  deliverStripeEvent,
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
  waitUntil,
} from '@booking/test-kit';

// A card payment that lands after its hold expired and its seats were sold is refunded
// automatically. That refund is recorded like any other, with Stripe's answer: succeeded at once,
// pending until Stripe's notification, or failed, when the money is still ours to give back. The
// booking becomes `refunded` only once money went back; until then a held one stays held (flagged),
// and it is cancelled only when the refund failed: booking.cancelled says no money went back.
// The app's real Stripe SDK talks to the fake Stripe; PostgreSQL and Redis are real.

const REASON = 'booking could not be confirmed';

describe('automatic refunds of card payments that could not buy their seats', () => {
  let fake: FakeStripe;
  let t: TestApp;
  /** The same database and Redis, with one-second holds: a booking whose hold runs out at once. */
  let short: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url));
    short = createTestApp({ ...stripeEnv(fake.url), HOLD_TTL_SECONDS: '1' });
  });
  // A tenant of its own each: every test sells out its slot.
  beforeEach(async () => {
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
    await short?.close();
    await stopFakeStripe(fake);
  });

  /**
   * A held booking whose customer paid by card after the hold ran out and every seat was taken
   * by others: the signed payment_intent.succeeded that cannot confirm it.
   */
  async function paidTooLate(giftCardCode?: string) {
    const { experience, slot } = kayak(demo);
    const booked = await createBooking(short, demo, { experience, slotId: slot.id, guests: 2, giftCardCode });
    const pi = await request(short.app)
      .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
      .set('X-Forwarded-For', booked.ip)
      .set('X-Booking-Token', booked.booking_token);
    expect(pi.status).toBe(200);
    const intent = fake.succeed((pi.body.client_secret as string).split('_secret_')[0]!);
    const { holdExpiresAt } = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
    await holdExpired(t, holdExpiresAt.getTime());
    await placeHold(t, clientIp(), experience, slot.id, 12);
    await placeHold(t, clientIp(), experience, slot.id, 12);
    return {
      bookingId: booked.booking_id,
      intent,
      paid: signedPaymentSucceededEvent(intent, { secret: TEST_WEBHOOK_SECRET }),
    };
  }

  const deliver = (signed: { payload: string; signature: string }) => deliverStripeEvent(t, signed);
  const refundRows = (bookingId: string) =>
    t.deps.db.refund.findMany({ where: { bookingId }, orderBy: { createdAt: 'asc' } });
  const cardPayment = (bookingId: string) =>
    t.deps.db.payment.findFirstOrThrow({ where: { bookingId, method: 'card' } });
  const bookingRow = (bookingId: string) => t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } });
  const eventNames = async (bookingId: string) =>
    (await t.deps.db.event.findMany({ where: { entityId: bookingId }, orderBy: { createdAt: 'asc' } })).map(
      (event) => event.name,
    );
  const eventsOf = async (bookingId: string, name: EventName) =>
    (await t.deps.db.event.findMany({ where: { entityId: bookingId, name }, orderBy: { createdAt: 'asc' } })).map(
      (event) => event.data as Record<string, unknown>,
    );
  const subject = (booking: { id: string; experienceId: string; venueId: string; slotId: string }) => ({
    booking_id: booking.id,
    experience_id: booking.experienceId,
    venue_id: booking.venueId,
    slot_id: booking.slotId,
    customer_email: expect.any(String),
  });
  const common = (name: EventName, bookingId: string) => ({
    event_id: expect.any(String),
    schema_version: EVENT_SCHEMA_VERSIONS[name],
    entity_type: 'booking',
    entity_id: bookingId,
  });
  const providerRefundsOf = (intentId: string) => fake.refunds.filter((r) => r.payment_intent === intentId);
  const refundRequestsFor = (intentId: string) =>
    fake.requestsTo('POST', '/v1/refunds').filter((r) => r.body.payment_intent === intentId);
  /**
   * Stripe settles its refund later and notifies it: the refund as Stripe lists it from then on,
   * and as the notification carries it. An answer already given (or being given) is not changed.
   */
  const settleAtProvider = (refund: FakeRefund, status: 'succeeded' | 'failed') => {
    const settled = { ...refund, status };
    fake.refunds[fake.refunds.indexOf(refund)] = settled;
    return settled;
  };
  const operatorRefund = (bookingId: string) =>
    request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: bookingId });

  it('when Stripe answers pending for a held booking paid in part by gift card, then the booking stays held and flagged, and the notification that the money went back makes it refunded and returns the gift card part once, with no booking.cancelled ever', async () => {
    const small = demo.gift_cards.find((card) => card.balance_cents === 500)!;
    const giftCard = () =>
      t.deps.db.giftCard.findFirstOrThrow({ where: { tenantId: demo.tenant.id, codeLast4: small.code.slice(-4) } });
    const late = await paidTooLate(small.code);
    expect((await giftCard()).balanceCents).toBe(0);
    fake.answerNextRefunds('pending');

    expect((await deliver(late.paid)).status).toBe(200);

    const [pending] = await refundRows(late.bookingId);
    expect(pending).toMatchObject({ automatic: true, status: 'pending', amountCents: late.intent.amount });
    expect(await cardPayment(late.bookingId)).toMatchObject({
      status: 'succeeded',
      refundedCents: late.intent.amount,
      refundDue: false,
    });
    const booking = await bookingRow(late.bookingId);
    // Nothing went back yet, and money is on its way: neither cancelled ("no refund") nor refunded.
    expect(booking).toMatchObject({ status: 'held', reviewReason: 'payment_refund_pending' });
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'gift_card.redeemed']);
    // The gift card part waits for the outcome.
    expect((await giftCard()).balanceCents).toBe(0);
    // An operator cannot cancel it either: booking.cancelled would say no money goes back.
    const cancel = await request(t.app)
      .post(`/api/bookings/${late.bookingId}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager));
    expect([cancel.status, cancel.body.error]).toEqual([409, 'refund_in_progress']);
    expect(await bookingRow(late.bookingId)).toMatchObject({ status: 'held', reviewReason: 'payment_refund_pending' });
    expect((await giftCard()).balanceCents).toBe(0);
    // Its answer is recorded: a redelivery of the payment asks Stripe nothing more.
    expect((await deliver(late.paid)).status).toBe(200);
    expect(refundRequestsFor(late.intent.id)).toHaveLength(1);

    const made = settleAtProvider(providerRefundsOf(late.intent.id)[0]!, 'succeeded');
    const updated = signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET });
    const replies = [
      await deliver(updated),
      await deliver(updated),
      await deliver(signedChargeRefundedEvent(late.intent, [made], { secret: TEST_WEBHOOK_SECRET })),
    ];

    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ id: pending!.id, status: 'succeeded', providerRefundId: made.id }),
    ]);
    expect(await eventsOf(late.bookingId, 'refund.created')).toEqual([
      {
        ...common('refund.created', late.bookingId),
        refund_id: pending!.id,
        payment_intent_id: late.intent.id,
        amount_cents: late.intent.amount,
        reason: REASON,
        status: 'succeeded',
      },
    ]);
    expect(await eventsOf(late.bookingId, 'booking.refunded')).toEqual([
      { ...common('booking.refunded', late.bookingId), ...subject(booking), amount_cents: late.intent.amount },
    ]);
    expect(await eventNames(late.bookingId)).toEqual([
      'booking.created',
      'gift_card.redeemed',
      'refund.created',
      'booking.refunded',
    ]);
    // The money is back: nothing is left for an operator to look at.
    expect(await bookingRow(late.bookingId)).toMatchObject({ status: 'refunded', reviewReason: null });
    expect(await cardPayment(late.bookingId)).toMatchObject({ status: 'refunded', refundedCents: late.intent.amount });
    expect((await giftCard()).balanceCents).toBe(500);
  });

  it('when Stripe answers pending and later reports the refund failed, then the money is refundable again, the held booking is cancelled and flagged, and an operator refund gives it back with the one booking.refunded and clears the flag', async () => {
    const late = await paidTooLate();
    fake.answerNextRefunds('pending');
    expect((await deliver(late.paid)).status).toBe(200);
    const made = settleAtProvider(providerRefundsOf(late.intent.id)[0]!, 'failed');

    const res = await deliver(signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET, type: 'refund.failed' }));

    expect(res.status).toBe(200);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'failed', providerRefundId: made.id }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({
      status: 'succeeded',
      refundedCents: 0,
      refundDue: false,
    });
    expect(await bookingRow(late.bookingId)).toMatchObject({
      status: 'cancelled',
      reviewReason: 'automatic_refund_failed',
    });
    // Cancelled when the refund failed, not while it was pending: no money went back.
    expect(await eventsOf(late.bookingId, 'booking.cancelled')).toEqual([
      expect.objectContaining({ cancelled_by_user_id: null, reason: 'automatic_refund_failed' }),
    ]);
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'booking.cancelled']);
    // The automatic refund is over: a redelivery of the payment does not try again behind the operator.
    expect((await deliver(late.paid)).status).toBe(200);
    expect(refundRequestsFor(late.intent.id)).toHaveLength(1);

    const refunded = await operatorRefund(late.bookingId);

    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({
      status: 'succeeded',
      amount_cents: late.intent.amount,
      booking_status: 'refunded',
      refundable_cents: 0,
    });
    expect((await bookingRow(late.bookingId)).reviewReason).toBeNull();
    expect(providerRefundsOf(late.intent.id).map((r) => r.status)).toEqual(['failed', 'succeeded']);
    expect(await eventsOf(late.bookingId, 'refund.created')).toEqual([
      expect.objectContaining({ refund_id: refunded.body.refund_id, amount_cents: late.intent.amount }),
    ]);
    expect(await eventNames(late.bookingId)).toEqual([
      'booking.created',
      'booking.cancelled',
      'refund.created',
      'booking.refunded',
    ]);
  });

  it('when Stripe answers failed at once, then the held booking is cancelled and flagged, its payment refundable, nothing says it was refunded, and the operator refund clears the flag', async () => {
    const late = await paidTooLate();
    fake.answerNextRefunds('failed');

    const res = await deliver(late.paid);

    expect(res.status).toBe(200);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'failed', amountCents: late.intent.amount }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({
      status: 'succeeded',
      refundedCents: 0,
      refundDue: false,
    });
    expect(await bookingRow(late.bookingId)).toMatchObject({
      status: 'cancelled',
      reviewReason: 'automatic_refund_failed',
    });
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'booking.cancelled']);

    const refunded = await operatorRefund(late.bookingId);

    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({ status: 'succeeded', booking_status: 'refunded' });
    expect(await bookingRow(late.bookingId)).toMatchObject({ status: 'refunded', reviewReason: null });
  });

  it('when Stripe reports failed an automatic refund it had reported succeeded, then the refunded booking stays refunded, is flagged, and a refund made in the dashboard is recorded against the money that is refundable again and clears the flag', async () => {
    const late = await paidTooLate();
    expect((await deliver(late.paid)).status).toBe(200);
    expect((await bookingRow(late.bookingId)).status).toBe('refunded');
    const made = settleAtProvider(providerRefundsOf(late.intent.id)[0]!, 'failed');

    const res = await deliver(signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET, type: 'refund.failed' }));

    expect(res.status).toBe(200);
    expect(await bookingRow(late.bookingId)).toMatchObject({
      status: 'refunded',
      reviewReason: 'automatic_refund_failed',
    });
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'failed', providerRefundId: made.id }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({ status: 'succeeded', refundedCents: 0 });
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'refund.created', 'booking.refunded']);
    // `refunded` is final: the refund routes refuse it, and the operator refunds in Stripe's dashboard.
    expect((await operatorRefund(late.bookingId)).body.error).toBe('booking_not_refundable');
    const dashboard = await t.deps.stripe!.refunds.create({ payment_intent: late.intent.id });

    const notified = await deliver(
      signedChargeRefundedEvent(late.intent, [dashboard as FakeRefund, made], { secret: TEST_WEBHOOK_SECRET }),
    );

    expect(notified.status).toBe(200);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'failed' }),
      expect.objectContaining({ automatic: false, status: 'succeeded', providerRefundId: dashboard.id }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({ status: 'refunded', refundedCents: late.intent.amount });
    expect(await bookingRow(late.bookingId)).toMatchObject({ status: 'refunded', reviewReason: null });
    expect(await eventNames(late.bookingId)).toEqual([
      'booking.created',
      'refund.created',
      'booking.refunded',
      'refund.created',
    ]);
  });

  it('when Stripe made the automatic refund but its answer was never recorded, then the redelivery is refused a second refund, finds that one and records it once', async () => {
    const late = await paidTooLate();
    fake.failNextRefunds(3);
    expect((await deliver(late.paid)).status).toBeGreaterThanOrEqual(500);
    // The next attempt reached Stripe, but the process died before its answer was recorded.
    const lost = await t.deps.stripe!.refunds.create({
      payment_intent: late.intent.id,
      metadata: { booking_id: late.bookingId, automatic: 'true', reason: REASON },
    });

    const res = await deliver(late.paid);

    expect(res.status).toBe(200);
    expect(refundRequestsFor(late.intent.id).map((r) => r.status)).toEqual([500, 500, 500, 200, 400]);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'succeeded', providerRefundId: lost.id }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({ status: 'refunded', refundDue: false });
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'refund.created', 'booking.refunded']);
  });

  it('when the payment was refunded in full in the dashboard before the automatic refund could be made, then the redelivery stops asking and the dashboard refund is recorded', async () => {
    const late = await paidTooLate();
    fake.failNextRefunds(3);
    expect((await deliver(late.paid)).status).toBeGreaterThanOrEqual(500);
    const dashboard = await t.deps.stripe!.refunds.create({ payment_intent: late.intent.id });

    const res = await deliver(late.paid);

    expect(res.status).toBe(200);
    expect(refundRequestsFor(late.intent.id).map((r) => r.status)).toEqual([500, 500, 500, 200, 400]);
    expect(await cardPayment(late.bookingId)).toMatchObject({ status: 'succeeded', refundDue: false });
    expect((await deliver(late.paid)).status).toBe(200);
    expect(refundRequestsFor(late.intent.id)).toHaveLength(5);

    const notified = await deliver(
      signedChargeRefundedEvent(late.intent, [dashboard as FakeRefund], { secret: TEST_WEBHOOK_SECRET }),
    );

    expect(notified.status).toBe(200);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: false, status: 'succeeded', providerRefundId: dashboard.id }),
    ]);
    expect((await bookingRow(late.bookingId)).status).toBe('refunded');
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'refund.created', 'booking.refunded']);
  });

  it('when Stripe notifies the automatic refund before the payment notification has recorded it, then that notification records it with its own status, and the payment path records nothing more', async () => {
    const late = await paidTooLate();
    fake.answerNextRefunds('pending');
    // Stripe makes the refund at once but its answer is slow: its notification can come first.
    fake.delayNextRefunds(1, 1_000);
    const paying = deliver(late.paid).then((r) => r);
    const made = await waitUntil(() => providerRefundsOf(late.intent.id)[0], {
      what: 'the automatic refund to be made at the fake Stripe',
    });
    const updated = signedRefundEvent(settleAtProvider(made, 'succeeded'), { secret: TEST_WEBHOOK_SECRET });

    const early = await deliver(updated);
    const paid = await paying;

    // Never refused: a payment whose payment event is not delivered again would be stuck.
    expect(early.status).toBe(200);
    expect(paid.status).toBe(200);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'succeeded', providerRefundId: made.id }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({
      status: 'refunded',
      refundedCents: late.intent.amount,
      refundDue: false,
    });
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'refund.created', 'booking.refunded']);
    expect((await deliver(updated)).status).toBe(200);
    expect(await eventNames(late.bookingId)).toHaveLength(3);
  });

  it('when two late card payments land on one held booking and the first is given back pending, then neither counts as money paying for it: it stays held, and is refunded once both are back', async () => {
    const late = await paidTooLate();
    // A second card payment for the same booking (another tab), as late as the first.
    const second = await t.deps.stripe!.paymentIntents.create({
      amount: late.intent.amount,
      currency: late.intent.currency,
      metadata: { booking_id: late.bookingId },
    });
    const other = fake.succeed(second.id);
    const otherPaid = signedPaymentSucceededEvent(other, { secret: TEST_WEBHOOK_SECRET });
    // Its refund cannot be asked for yet: the payment waits with its refund due.
    fake.failNextRefunds(3);
    expect((await deliver(otherPaid)).status).toBeGreaterThanOrEqual(500);
    fake.answerNextRefunds('pending');

    expect((await deliver(late.paid)).status).toBe(200);

    expect(await bookingRow(late.bookingId)).toMatchObject({ status: 'held', reviewReason: 'payment_refund_pending' });

    // The second one's refund goes through at once; the first one's money is still on its way.
    expect((await deliver(otherPaid)).status).toBe(200);

    expect(await bookingRow(late.bookingId)).toMatchObject({ status: 'held', reviewReason: 'payment_refund_pending' });
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'refund.created']);

    const made = settleAtProvider(providerRefundsOf(late.intent.id)[0]!, 'succeeded');
    expect((await deliver(signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);

    expect((await bookingRow(late.bookingId)).status).toBe('refunded');
    expect(await eventsOf(late.bookingId, 'booking.refunded')).toEqual([
      expect.objectContaining({ amount_cents: late.intent.amount + other.amount }),
    ]);
    expect(await eventNames(late.bookingId)).toEqual([
      'booking.created',
      'refund.created',
      'refund.created',
      'booking.refunded',
    ]);
  });

  it('when a slow delivery hears its automatic refund failed after a redelivery had another one made and recorded, then the failed one is not recorded and the refunded booking stays refunded', async () => {
    const late = await paidTooLate();
    const warn = jest.spyOn(t.deps.logger, 'warn');
    fake.answerNextRefunds('failed', 'succeeded');
    fake.delayNextRefunds(1, 1_000);
    const slow = deliver(late.paid).then((r) => r);
    const failed = await waitUntil(() => providerRefundsOf(late.intent.id)[0], {
      what: 'the slow delivery to have its refund made at the fake Stripe',
    });
    // A redelivery in the meantime finds the refund still due: Stripe makes another, which succeeds.
    expect((await deliver(late.paid)).status).toBe(200);
    const [, second] = providerRefundsOf(late.intent.id);

    expect((await slow).status).toBe(200);

    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'succeeded', providerRefundId: second!.id }),
    ]);
    expect(await bookingRow(late.bookingId)).toMatchObject({
      status: 'refunded',
      reviewReason: 'seats_unavailable_at_payment',
    });
    expect(await eventNames(late.bookingId)).toEqual(['booking.created', 'refund.created', 'booking.refunded']);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ booking_id: late.bookingId, provider_refund_id: failed.id }),
      expect.any(String),
    );
    warn.mockRestore();
    // Its notification changes nothing either: it gave nothing back.
    const notified = await deliver(signedRefundEvent(failed, { secret: TEST_WEBHOOK_SECRET, type: 'refund.failed' }));
    expect(notified.status).toBe(200);
    expect(await refundRows(late.bookingId)).toHaveLength(1);
    expect(await eventNames(late.bookingId)).toHaveLength(3);
  });

  it('when an automatic refund is made after the payment one was recorded failed, then its notification records it as a refund made in Stripe and the cancelled booking becomes refunded', async () => {
    const late = await paidTooLate();
    fake.answerNextRefunds('failed');
    expect((await deliver(late.paid)).status).toBe(200);
    expect((await bookingRow(late.bookingId)).status).toBe('cancelled');
    // What a delivery that stalled before the first refund was recorded asks Stripe afterwards.
    const behind = await t.deps.stripe!.refunds.create({
      payment_intent: late.intent.id,
      metadata: { booking_id: late.bookingId, automatic: 'true', reason: REASON },
    });

    const res = await deliver(
      signedChargeRefundedEvent(late.intent, [behind as FakeRefund], { secret: TEST_WEBHOOK_SECRET }),
    );

    expect(res.status).toBe(200);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: true, status: 'failed' }),
      expect.objectContaining({ automatic: false, status: 'succeeded', providerRefundId: behind.id }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({ status: 'refunded', refundedCents: late.intent.amount });
    expect(await bookingRow(late.bookingId)).toMatchObject({ status: 'refunded', reviewReason: null });
    expect(await eventNames(late.bookingId)).toEqual([
      'booking.created',
      'booking.cancelled',
      'refund.created',
      'booking.refunded',
    ]);
  });

  it('when a charge.refunded lists the automatic refund not recorded yet after an older refund of ours, then both are brought in line in one delivery, and its redelivery changes nothing', async () => {
    const late = await paidTooLate();
    // The automatic refund cannot be asked for yet: the payment waits with its refund due.
    fake.failNextRefunds(3);
    expect((await deliver(late.paid)).status).toBeGreaterThanOrEqual(500);
    const part = await request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: late.bookingId, amount_cents: 1_000 });
    expect(part.status).toBe(201);
    // The next attempt gave the rest back, but its answer was never recorded.
    const automatic = await t.deps.stripe!.refunds.create({
      payment_intent: late.intent.id,
      metadata: { booking_id: late.bookingId, automatic: 'true', reason: REASON },
    });
    const [ours] = providerRefundsOf(late.intent.id);
    // Stripe lists the newest refund first.
    const notification = signedChargeRefundedEvent(late.intent, [automatic as FakeRefund, ours!], {
      secret: TEST_WEBHOOK_SECRET,
    });

    const replies = [await deliver(notification), await deliver(notification)];

    expect(replies.map((r) => r.status)).toEqual([200, 200]);
    expect(await refundRows(late.bookingId)).toEqual([
      expect.objectContaining({ automatic: false, status: 'succeeded', amountCents: 1_000 }),
      expect.objectContaining({
        automatic: true,
        status: 'succeeded',
        providerRefundId: automatic.id,
        amountCents: late.intent.amount - 1_000,
      }),
    ]);
    expect(await cardPayment(late.bookingId)).toMatchObject({
      status: 'refunded',
      refundedCents: late.intent.amount,
      refundDue: false,
    });
    expect((await bookingRow(late.bookingId)).status).toBe('refunded');
    expect(await eventNames(late.bookingId)).toEqual([
      'booking.created',
      'refund.created',
      'refund.created',
      'booking.refunded',
    ]);
  });
});
