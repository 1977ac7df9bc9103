import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { generateGiftCardCode, hashGiftCardCode } from '@booking/signing';
import {
  bearer,
  clientIp,
  createBooking,
  createTestApp,
  type FakeStripe,
  heldBooking,
  kayak,
  seedTenant,
  signedPaymentSucceededEvent,
  signedRefundEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
} from '@booking/test-kit';

// Money arriving twice for one booking: a late card payment after the till took cash, and a
// reissue asked for while that card payment is being refunded. Neither may pay out twice or
// unbook a paid booking.

const WEBHOOK_SECRET = 'whsec_review';

describe('a card payment that lands on a booking already paid another way', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url, WEBHOOK_SECRET));
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t.close();
    await stopFakeStripe(fake);
  });

  /** A held booking with a PaymentIntent the customer has not paid yet. */
  async function heldWithIntent(slotIndex: number) {
    const booked = await heldBooking(t, demo, { slotIndex });
    const intent = await request(t.app)
      .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
      .set('X-Forwarded-For', booked.ip)
      .set('X-Booking-Token', booked.booking_token);
    expect(intent.status).toBe(200);
    const intentId = (intent.body.client_secret as string).split('_secret_')[0]!;
    return { bookingId: booked.booking_id, slotId: booked.slotId, totalCents: booked.total_cents, intentId };
  }

  async function payCashAtTill(bookingId: string, amountCents: number) {
    const shift = await request(t.app)
      .post('/api/pos/shifts/open')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ starting_cash_cents: 0 });
    const shiftId = (shift.body.shift_id ??
      (await t.deps.db.posShift.findFirstOrThrow({ where: { tenantId: demo.tenant.id, closedAt: null } }))
        .id) as string;
    const paid = await request(t.app)
      .post(`/api/pos/shifts/${shiftId}/cash-payments`)
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: bookingId, amount_cents: amountCents });
    expect(paid.status).toBe(200);
  }

  const deliver = (signed: { payload: string; signature: string }) =>
    request(t.app)
      .post('/api/payments/stripe/webhook')
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', signed.signature)
      .send(signed.payload);

  it('when the card clears after the till took cash, then the card is refunded once and the booking stays confirmed with its seats', async () => {
    const held = await heldWithIntent(1);
    await payCashAtTill(held.bookingId, held.totalCents);
    const seatsBefore = (await t.deps.db.slot.findUniqueOrThrow({ where: { id: held.slotId } })).seatsBooked;

    const res = await deliver(signedPaymentSucceededEvent(fake.succeed(held.intentId), { secret: WEBHOOK_SECRET }));

    expect(res.status).toBe(200);
    expect(fake.refunds.filter((r) => r.payment_intent === held.intentId)).toHaveLength(1);
    const booking = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: held.bookingId },
      include: { payments: true },
    });
    expect(booking.status).toBe('confirmed');
    expect(booking.reviewReason).toEqual(expect.any(String));
    expect(booking.payments.map((p) => [p.method, p.status]).sort()).toEqual([
      ['card', 'refunded'],
      ['cash', 'succeeded'],
    ]);
    expect((await t.deps.db.slot.findUniqueOrThrow({ where: { id: held.slotId } })).seatsBooked).toBe(seatsBefore);
    const names = (await t.deps.db.event.findMany({ where: { entityId: held.bookingId } })).map((e) => e.name);
    expect(names).not.toContain('booking.refunded');
  });

  it('when a reissue is asked while the late card payment is being refunded, then it is 409 and no gift card is issued', async () => {
    const held = await heldWithIntent(3);
    await payCashAtTill(held.bookingId, held.totalCents);
    fake.failNextRefunds(10);
    const failed = await deliver(signedPaymentSucceededEvent(fake.succeed(held.intentId), { secret: WEBHOOK_SECRET }));
    expect(failed.status).toBeGreaterThanOrEqual(500);

    const reissue = await request(t.app)
      .post(`/api/bookings/${held.bookingId}/reissue-gift-card`)
      .set('Authorization', bearer(demo.api_keys.manager));

    expect(reissue.status).toBe(409);
    expect(reissue.body.error).toBe('refund_in_progress');
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: held.bookingId } });
    expect(booking.status).toBe('confirmed');
    expect(booking.reissuedGiftCardId).toBeNull();
    fake.failNextRefunds(0);
  });

  it('when the refund of a card that cleared after the till took cash fails, then the redelivery refunds it and the reissue may go ahead', async () => {
    const held = await heldWithIntent(5);
    await payCashAtTill(held.bookingId, held.totalCents);
    const event = signedPaymentSucceededEvent(fake.succeed(held.intentId), { secret: WEBHOOK_SECRET });
    fake.failNextRefunds(10);
    expect((await deliver(event)).status).toBeGreaterThanOrEqual(500);
    fake.failNextRefunds(0);

    const redelivered = await deliver(event);

    expect(redelivered.status).toBe(200);
    expect(fake.refunds.filter((r) => r.payment_intent === held.intentId)).toHaveLength(1);
    const card = await t.deps.db.payment.findFirstOrThrow({ where: { bookingId: held.bookingId, method: 'card' } });
    // Refunded, and the duty done: its answer is recorded as the booking's one automatic refund.
    expect([card.status, card.refundDue]).toEqual(['refunded', false]);
    expect(await t.deps.db.refund.findMany({ where: { bookingId: held.bookingId } })).toEqual([
      expect.objectContaining({ paymentId: card.id, automatic: true, status: 'succeeded' }),
    ]);
    expect((await deliver(event)).status).toBe(200);
    expect(fake.refunds.filter((r) => r.payment_intent === held.intentId)).toHaveLength(1);
    // The card money is back: the cash alone is reissued.
    const reissue = await request(t.app)
      .post(`/api/bookings/${held.bookingId}/reissue-gift-card`)
      .set('Authorization', bearer(demo.api_keys.manager));
    expect(reissue.status).toBe(200);
    expect(reissue.body.gift_card.balance_cents).toBe(held.totalCents);
  });

  it('when the refund of a card that cleared after the till took cash fails later, then the booking stays confirmed and flagged, and an operator refund gives the card back without unbooking it', async () => {
    const held = await heldWithIntent(0);
    await payCashAtTill(held.bookingId, held.totalCents);
    const seatsBefore = (await t.deps.db.slot.findUniqueOrThrow({ where: { id: held.slotId } })).seatsBooked;
    fake.answerNextRefunds('pending');
    const intent = fake.succeed(held.intentId);
    expect((await deliver(signedPaymentSucceededEvent(intent, { secret: WEBHOOK_SECRET }))).status).toBe(200);
    const made = fake.refunds.find((r) => r.payment_intent === held.intentId)!;
    made.status = 'failed';

    const res = await deliver(signedRefundEvent(made, { secret: WEBHOOK_SECRET, type: 'refund.failed' }));

    expect(res.status).toBe(200);
    expect(await t.deps.db.booking.findUniqueOrThrow({ where: { id: held.bookingId } })).toMatchObject({
      status: 'confirmed',
      reviewReason: 'automatic_refund_failed',
    });
    const card = await t.deps.db.payment.findFirstOrThrow({ where: { bookingId: held.bookingId, method: 'card' } });
    expect(card).toMatchObject({ status: 'succeeded', refundedCents: 0, refundDue: false });

    const refunded = await request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: held.bookingId });

    expect(refunded.status).toBe(201);
    expect(refunded.body).toMatchObject({ amount_cents: card.amountCents, booking_status: 'confirmed' });
    expect((await t.deps.db.slot.findUniqueOrThrow({ where: { id: held.slotId } })).seatsBooked).toBe(seatsBefore);
    const names = (await t.deps.db.event.findMany({ where: { entityId: held.bookingId } })).map((e) => e.name);
    expect(names.filter((name) => name !== 'booking.created' && name !== 'booking.confirmed')).toEqual([
      'refund.created',
    ]);
  });

  it('when an id is a urn:uuid, then it is refused at the edge with 400, never a database error', async () => {
    const urn = 'urn:uuid:6e8bc430-9c3a-11d9-9669-0800200c9a66';
    const { experience } = kayak(demo);

    const hold = await request(t.app)
      .post('/api/bookings/hold')
      .set('X-Forwarded-For', clientIp())
      .send({ slot_id: urn, experience_id: experience.id, seats: 1 });
    const refund = await request(t.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: urn });

    expect(hold.status).toBe(400);
    expect(hold.body.error).toBe('invalid_body');
    expect(refund.status).toBe(400);
    expect(refund.body.error).toBe('invalid_body');
  });

  it('when a held booking partly paid by gift card is cancelled, then the gift card gets its money back and nothing else moves', async () => {
    const small = demo.gift_cards.find((card) => card.balance_cents === 500)!;
    const booked = await createBooking(t, demo, { slotIndex: 5, guests: 1, giftCardCode: small.code });
    expect(booked).toMatchObject({ status: 'held', gift_card_applied_cents: 500 });
    const card = () =>
      t.deps.db.giftCard.findFirstOrThrow({ where: { tenantId: demo.tenant.id, codeLast4: small.code.slice(-4) } });
    expect((await card()).balanceCents).toBe(0);

    const cancelled = await request(t.app)
      .post(`/api/bookings/${booked.booking_id}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager));

    expect(cancelled.status).toBe(200);
    expect((await card()).balanceCents).toBe(500);
    const payments = await t.deps.db.payment.findMany({ where: { bookingId: booked.booking_id } });
    expect(payments).toEqual([
      expect.objectContaining({ method: 'gift_card', status: 'refunded', refundedCents: 500 }),
    ]);
  });

  it('when what is left to pay is under the provider minimum, then the payment intent is 502 with its reason, not a 500', async () => {
    // One guest at 45.00 less a card worth 44.90 leaves 10 cents, under Stripe's 50.
    const code = generateGiftCardCode();
    await t.deps.db.giftCard.create({
      data: {
        tenantId: demo.tenant.id,
        codeHash: hashGiftCardCode(code),
        codeLast4: code.slice(-4),
        currency: 'USD',
        balanceCents: 4490,
      },
    });
    const booked = await createBooking(t, demo, { slotIndex: 4, guests: 1, giftCardCode: code });
    expect(booked).toMatchObject({ status: 'held', total_cents: 4500, gift_card_applied_cents: 4490 });

    const res = await request(t.app)
      .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
      .set('X-Forwarded-For', booked.ip)
      .set('X-Booking-Token', booked.booking_token);

    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ error: 'payment_provider_error', detail: { provider_code: 'amount_too_small' } });
  });
});
