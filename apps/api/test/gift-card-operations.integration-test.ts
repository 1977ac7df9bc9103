import { randomUUID } from 'node:crypto';
import request from 'supertest';
import Stripe from 'stripe';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS } from '@booking/events';
import { hashGiftCardCode, normalizeGiftCardCode, openSecret } from '@booking/signing';
import {
  bearer,
  clientIp,
  confirmedBooking,
  createBooking,
  createTestApp,
  type FakeStripe,
  keyIdOf,
  seedTenant,
  signedPaymentSucceededEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
} from '@booking/test-kit';

// POST /api/gift-cards/sell and POST /api/bookings/{id}/reissue-gift-card on the real PostgreSQL
// and Redis. The app's Stripe SDK points at a fake Stripe so that a booking can be part paid by
// card, part by gift card, before its paid amount is reissued.

const WEBHOOK_SECRET = 'whsec_test';
const CODE_FORMAT = /^[A-HJ-NP-Z2-9]{4}(-[A-HJ-NP-Z2-9]{4}){3}$/;

describe('gift card operations', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url, WEBHOOK_SECRET));
    [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
  });
  afterAll(async () => {
    await t.close();
    await stopFakeStripe(fake);
  });

  async function openShift(tenant: DemoTenant, options: { closed?: boolean } = {}): Promise<string> {
    const shift = await t.deps.db.posShift.create({
      data: {
        tenantId: tenant.tenant.id,
        openedByKeyId: await keyIdOf(t, tenant.api_keys.staff),
        startingCashCents: 10_000,
        closedAt: options.closed ? new Date() : null,
      },
    });
    return shift.id;
  }

  const sell = (body: object, key: string | null = demo.api_keys.staff) => {
    const req = request(t.app).post('/api/gift-cards/sell');
    return key === null ? req.send(body) : req.set('Authorization', bearer(key)).send(body);
  };
  const cardSale = (reference = `pi_${randomUUID().replace(/-/g, '')}`, amountCents = 5000) => ({
    amount_cents: amountCents,
    currency: 'USD',
    payment_method: 'card',
    payment_reference: reference,
  });
  /**
   * A card payment that really happened: a PaymentIntent made for a gift card sale of `demo` (as
   * the till's own Stripe integration makes it), which the fake provider marks succeeded.
   */
  async function paidIntent(amountCents: number, options: { succeed?: boolean } = {}): Promise<string> {
    const stripe = new Stripe('sk_test_x', { host: '127.0.0.1', port: fake.port, protocol: 'http' });
    const intent = await stripe.paymentIntents.create({
      amount: amountCents,
      currency: 'usd',
      metadata: { tenant_id: demo.tenant.id, purpose: 'gift_card_sale' },
    });
    if (options.succeed !== false) fake.succeed(intent.id);
    return intent.id;
  }
  const saleCount = (tenant: DemoTenant) => t.deps.db.giftCardSale.count({ where: { tenantId: tenant.tenant.id } });

  const seatsBooked = async (slotId: string) =>
    (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
  const eventsOf = (entityId: string, name?: string) =>
    t.deps.db.event.findMany({ where: { entityId, ...(name && { name }) }, orderBy: { createdAt: 'asc' } });

  describe('POST /api/gift-cards/sell', () => {
    it('when staff sell a card for cash within an open shift, then the card is issued with a one-time code, the sale is recorded against the shift and gift_card.sold names no code or recipient', async () => {
      const shiftId = await openShift(demo);
      const recipient = `friend-${randomUUID().slice(0, 8)}@example.com`;

      const res = await sell({
        amount_cents: 7500,
        currency: 'USD',
        payment_method: 'cash',
        shift_id: shiftId,
        recipient_email: recipient,
      });

      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        gift_card_id: expect.any(String),
        code: expect.stringMatching(CODE_FORMAT),
        balance_cents: 7500,
        currency: 'USD',
        last4: normalizeGiftCardCode(res.body.code).slice(-4),
        sale_id: expect.any(String),
      });
      const card = await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: res.body.gift_card_id } });
      expect(card).toMatchObject({
        tenantId: demo.tenant.id,
        codeHash: hashGiftCardCode(res.body.code),
        codeLast4: res.body.last4,
        currency: 'USD',
        initialBalanceCents: 7500,
        balanceCents: 7500,
      });
      // Only the hash and last four are kept: the code itself is in no column.
      expect(JSON.stringify(card)).not.toContain(normalizeGiftCardCode(res.body.code));
      const staffKeyId = await keyIdOf(t, demo.api_keys.staff);
      expect(await t.deps.db.giftCardSale.findUniqueOrThrow({ where: { id: res.body.sale_id } })).toMatchObject({
        tenantId: demo.tenant.id,
        giftCardId: res.body.gift_card_id,
        amountCents: 7500,
        currency: 'USD',
        method: 'cash',
        paymentReference: null,
        shiftId,
        actorKeyId: staffKeyId,
      });

      const events = await eventsOf(res.body.sale_id);
      expect(events).toHaveLength(1);
      expect(events[0]!.name).toBe('gift_card.sold');
      expect(events[0]!.tenantId).toBe(demo.tenant.id);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['gift_card.sold'],
        entity_type: 'order',
        entity_id: res.body.sale_id,
        gift_card_id: res.body.gift_card_id,
        amount_cents: 7500,
        currency: 'USD',
        payment_id: res.body.sale_id,
        actor_user_id: staffKeyId,
      });
      const eventJson = JSON.stringify(events[0]);
      for (const secret of [res.body.code, normalizeGiftCardCode(res.body.code), recipient]) {
        expect(eventJson).not.toContain(secret);
      }
    });

    it('when a manager sells a card paid by card, then the provider reference is kept on the sale and the code pays for a booking', async () => {
      const reference = await paidIntent(10_000);

      const res = await sell(cardSale(reference, 10_000), demo.api_keys.manager);

      expect(res.status).toBe(201);
      expect(await t.deps.db.giftCardSale.findUniqueOrThrow({ where: { id: res.body.sale_id } })).toMatchObject({
        method: 'card',
        paymentReference: reference,
        shiftId: null,
        actorKeyId: await keyIdOf(t, demo.api_keys.manager),
      });
      const [sold] = await eventsOf(res.body.sale_id, 'gift_card.sold');
      expect(sold!.data).toMatchObject({ payment_id: res.body.sale_id, amount_cents: 10_000 });
      expect(JSON.stringify(sold)).not.toContain(reference);

      // Escape room, 2 guests at 28.00: the new card covers it and keeps the rest.
      const booked = await createBooking(t, demo, {
        experience: demo.experiences[1]!,
        slotIndex: 0,
        guests: 2,
        giftCardCode: res.body.code,
      });
      expect(booked.status).toBe('confirmed');
      const card = await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: res.body.gift_card_id } });
      expect(card.balanceCents).toBe(10_000 - booked.total_cents);
      expect(card.initialBalanceCents).toBe(10_000);
    });

    it.each([
      ['an amount under 1.00', { ...cardSale(), amount_cents: 99 }, '/amount_cents'],
      ['an amount over 10,000.00', { ...cardSale(), amount_cents: 1_000_001 }, '/amount_cents'],
      ['a fractional amount', { ...cardSale(), amount_cents: 150.5 }, '/amount_cents'],
      ['a lowercase currency', { ...cardSale(), currency: 'usd' }, '/currency'],
      ['a two-letter currency', { ...cardSale(), currency: 'US' }, '/currency'],
      ['an unknown payment method', { ...cardSale(), payment_method: 'cheque' }, '/payment_method'],
      [
        'a card sale without payment_reference',
        { amount_cents: 500, currency: 'USD', payment_method: 'card' },
        '/payment_reference',
      ],
      ['a cash sale without shift_id', { amount_cents: 500, currency: 'USD', payment_method: 'cash' }, '/shift_id'],
      [
        'a shift_id that is not a uuid',
        { amount_cents: 500, currency: 'USD', payment_method: 'cash', shift_id: '42' },
        '/shift_id',
      ],
      ['a malformed recipient email', { ...cardSale(), recipient_email: 'not-an-email' }, '/recipient_email'],
      ['an unknown field', { ...cardSale(), code: 'AAAA-BBBB-CCCC-DDDD' }, '/code'],
    ])(
      'when the body has %s, then it is 400 invalid_body naming the field and nothing is sold',
      async (_case, body, field) => {
        const before = await saleCount(demo);

        const res = await sell(body);

        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_body');
        expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
        expect(await saleCount(demo)).toBe(before);
      },
    );

    it('when a cash sale also names a payment_reference, then it is 400 invalid_body and nothing is sold', async () => {
      const before = await saleCount(demo);

      const res = await sell({ ...cardSale(), payment_method: 'cash', shift_id: await openShift(demo) });

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_body',
        detail: [{ field: '/payment_reference', message: expect.stringContaining('card') }],
      });
      expect(await saleCount(demo)).toBe(before);
    });

    it('when the shift is closed, then a cash sale is 409 shift_closed and nothing is sold', async () => {
      const shiftId = await openShift(demo, { closed: true });
      const before = await saleCount(demo);

      const res = await sell({ amount_cents: 500, currency: 'USD', payment_method: 'cash', shift_id: shiftId });

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('shift_closed');
      expect(await saleCount(demo)).toBe(before);
    });

    it("when the shift is another tenant's or does not exist, then the sale is 404 shift_not_found", async () => {
      const othersShift = await openShift(other);
      const before = await saleCount(demo);

      const [theirs, none] = await Promise.all([
        sell({ amount_cents: 500, currency: 'USD', payment_method: 'cash', shift_id: othersShift }),
        sell({ amount_cents: 500, currency: 'USD', payment_method: 'cash', shift_id: randomUUID() }),
      ]);

      expect(theirs.status).toBe(404);
      expect(theirs.body.error).toBe('shift_not_found');
      expect(none.status).toBe(404);
      expect(none.body.error).toBe('shift_not_found');
      expect(await saleCount(demo)).toBe(before);
    });

    it('when there is no API key or an unknown one, then it is 401 and nothing is sold', async () => {
      const before = await saleCount(demo);

      const [missing, unknown] = await Promise.all([
        sell(cardSale(), null),
        sell(cardSale(), 'svc_aaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'),
      ]);

      expect(missing.status).toBe(401);
      expect(missing.body.error).toBe('unauthorized');
      expect(unknown.status).toBe(401);
      expect(await saleCount(demo)).toBe(before);
    });

    it('when a card payment reference already paid for a sale, then a second sale with it is 409 payment_reference_used', async () => {
      const reference = await paidIntent(5000);
      const first = await sell(cardSale(reference));
      expect(first.status).toBe(201);

      const second = await sell(cardSale(reference, 9000));

      expect(second.status).toBe(409);
      expect(second.body.error).toBe('payment_reference_used');
      expect(await t.deps.db.giftCardSale.count({ where: { paymentReference: reference } })).toBe(1);
    });

    it('when a card payment reference already paid for a booking, then a sale with it is 409 payment_reference_used', async () => {
      const booked = await createBooking(t, demo, { slotIndex: 5, guests: 1 });
      const intent = await request(t.app)
        .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
        .set('X-Forwarded-For', clientIp())
        .set('X-Booking-Token', booked.booking_token);
      expect(intent.status).toBe(200);
      const intentId = (intent.body.client_secret as string).split('_secret_')[0]!;
      const signed = signedPaymentSucceededEvent(fake.succeed(intentId), { secret: WEBHOOK_SECRET });
      const paid = await request(t.app)
        .post('/api/payments/stripe/webhook')
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', signed.signature)
        .send(signed.payload);
      expect(paid.status).toBe(200);

      const res = await sell(cardSale(intentId));

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('payment_reference_used');
    });

    it('when two sales with the same card reference race, then exactly one card is sold', async () => {
      const reference = await paidIntent(5000);

      const results = await Promise.all(Array.from({ length: 4 }, () => sell(cardSale(reference))));

      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      expect(await t.deps.db.giftCardSale.count({ where: { paymentReference: reference } })).toBe(1);
    });

    it('when the card payment is unknown, unpaid or for another amount, then it is 400 payment_reference_invalid and nothing is sold', async () => {
      const before = await saleCount(demo);
      const unpaid = await paidIntent(5000, { succeed: false });
      const paidLess = await paidIntent(4000);

      const unknown = await sell(cardSale(`pi_${randomUUID().replace(/-/g, '')}`));
      const notSucceeded = await sell(cardSale(unpaid));
      const mismatch = await sell(cardSale(paidLess, 5000));

      for (const res of [unknown, notSucceeded, mismatch]) {
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('payment_reference_invalid');
      }
      expect(mismatch.body.detail).toMatchObject({ paid_cents: 4000 });
      expect(await saleCount(demo)).toBe(before);
    });

    it('when payments are not configured, then card sales are refused with 503 and cash sales still work', async () => {
      const plain = createTestApp();
      try {
        const card = await request(plain.app)
          .post('/api/gift-cards/sell')
          .set('Authorization', bearer(demo.api_keys.staff))
          .send(cardSale(await paidIntent(5000)));
        const cash = await request(plain.app)
          .post('/api/gift-cards/sell')
          .set('Authorization', bearer(demo.api_keys.staff))
          .send({ amount_cents: 1000, currency: 'USD', payment_method: 'cash', shift_id: await openShift(demo) });

        expect(card.status).toBe(503);
        expect(card.body.error).toBe('payments_not_configured');
        expect(cash.status).toBe(201);
      } finally {
        await plain.close();
      }
    });

    it('when a sale is retried with the same Idempotency-Key, then the same card is answered again and it is sold once', async () => {
      const key = `sale-${randomUUID()}`;
      const body = { amount_cents: 2500, currency: 'USD', payment_method: 'cash', shift_id: await openShift(demo) };
      const before = await saleCount(demo);
      const send = () =>
        request(t.app)
          .post('/api/gift-cards/sell')
          .set('Authorization', bearer(demo.api_keys.staff))
          .set('Idempotency-Key', key)
          .send(body);

      const first = await send();
      const retry = await send();

      expect(first.status).toBe(201);
      expect(retry.status).toBe(201);
      expect(retry.get('Idempotent-Replayed')).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(await saleCount(demo)).toBe(before + 1);
      expect(await eventsOf(first.body.sale_id, 'gift_card.sold')).toHaveLength(1);
    });
  });

  describe('POST /api/bookings/{id}/reissue-gift-card', () => {
    const reissue = (id: string, key: string) =>
      request(t.app).post(`/api/bookings/${id}/reissue-gift-card`).set('Authorization', bearer(key));

    it('when a manager reissues a booking paid by gift card, then it is cancelled, its seats return, a new card holds the paid amount and booking.reissued (not booking.cancelled) carries its code', async () => {
      const booked = await confirmedBooking(t, demo, { slotIndex: 1, guests: 3 });
      const seatsBefore = await seatsBooked(booked.slotId);

      const res = await reissue(booked.booking_id, demo.api_keys.manager);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        booking_id: booked.booking_id,
        status: 'cancelled',
        gift_card: {
          id: expect.any(String),
          code: expect.stringMatching(CODE_FORMAT),
          balance_cents: booked.total_cents,
          currency: 'USD',
        },
      });
      const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
      expect(booking.status).toBe('cancelled');
      expect(booking.reissuedGiftCardId).toBe(res.body.gift_card.id);
      expect(await seatsBooked(booked.slotId)).toBe(seatsBefore - 3);
      expect(await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: res.body.gift_card.id } })).toMatchObject({
        tenantId: demo.tenant.id,
        codeHash: hashGiftCardCode(res.body.gift_card.code),
        initialBalanceCents: booked.total_cents,
        balanceCents: booked.total_cents,
        currency: 'USD',
      });

      const reissued = await eventsOf(booked.booking_id, 'booking.reissued');
      expect(reissued).toHaveLength(1);
      expect(reissued[0]!.tenantId).toBe(demo.tenant.id);
      expect(reissued[0]!.data).toMatchObject({
        event_id: reissued[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['booking.reissued'],
        entity_type: 'booking',
        entity_id: booked.booking_id,
        booking_id: booked.booking_id,
        new_gift_card_id: res.body.gift_card.id,
        amount_cents: booked.total_cents,
        actor_user_id: await keyIdOf(t, demo.api_keys.manager),
      });
      // The code is delivered (the dispatcher opens it into the data) but kept sealed at rest.
      expect(reissued[0]!.data).not.toHaveProperty('new_gift_card_code');
      expect(JSON.stringify(reissued[0])).not.toContain(res.body.gift_card.code);
      expect(JSON.parse(openSecret(t.deps.config.webhooks.secretKey, reissued[0]!.sealedData!))).toEqual({
        new_gift_card_code: res.body.gift_card.code,
      });
      expect(await eventsOf(booked.booking_id, 'booking.cancelled')).toHaveLength(0);

      // The new card pays for another booking.
      const rebooked = await createBooking(t, demo, { slotIndex: 1, guests: 1, giftCardCode: res.body.gift_card.code });
      expect(rebooked.status).toBe('confirmed');
      expect((await t.deps.db.giftCard.findUniqueOrThrow({ where: { id: res.body.gift_card.id } })).balanceCents).toBe(
        booked.total_cents - rebooked.total_cents,
      );
    });

    it('when a booking was paid part by gift card and part by card, and some of it refunded, then the new card holds both payments less the refund', async () => {
      // The seed's 5.00 card covers part of one kayak seat; the card pays the rest.
      const booked = await createBooking(t, demo, { slotIndex: 3, guests: 2, giftCardCode: demo.gift_cards[1]!.code });
      expect(booked.status).toBe('held');
      const intent = await request(t.app)
        .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
        .set('X-Forwarded-For', clientIp())
        .set('X-Booking-Token', booked.booking_token);
      expect(intent.status).toBe(200);
      const intentId = (intent.body.client_secret as string).split('_secret_')[0]!;
      const signed = signedPaymentSucceededEvent(fake.succeed(intentId), { secret: WEBHOOK_SECRET });
      const paid = await request(t.app)
        .post('/api/payments/stripe/webhook')
        .set('Content-Type', 'application/json')
        .set('Stripe-Signature', signed.signature)
        .send(signed.payload);
      expect(paid.status).toBe(200);
      const cardPayment = await t.deps.db.payment.findFirstOrThrow({
        where: { bookingId: booked.booking_id, method: 'card' },
      });
      expect(cardPayment.amountCents).toBe(booked.total_cents - 500);
      // A refund of 3.00 already went back to the customer's card.
      await t.deps.db.payment.update({ where: { id: cardPayment.id }, data: { refundedCents: 300 } });
      const seatsBefore = await seatsBooked(booked.slotId);

      const res = await reissue(booked.booking_id, demo.api_keys.admin);

      expect(res.status).toBe(200);
      expect(res.body.gift_card.balance_cents).toBe(booked.total_cents - 300);
      expect(await seatsBooked(booked.slotId)).toBe(seatsBefore - 2);
      const [event] = await eventsOf(booked.booking_id, 'booking.reissued');
      expect(event!.data).toMatchObject({
        amount_cents: booked.total_cents - 300,
        actor_user_id: await keyIdOf(t, demo.api_keys.admin),
      });
    });

    it('when the booking is held, or confirmed with nothing paid, then it is 409 and nothing changes', async () => {
      const held = await createBooking(t, demo, { slotIndex: 4, guests: 1 });
      const unpaid = await createBooking(t, demo, { slotIndex: 4, guests: 1 });
      // An operator order: confirmed without payment (the spec allows it).
      await t.deps.db.booking.update({ where: { id: unpaid.booking_id }, data: { status: 'confirmed' } });
      const cardsBefore = await t.deps.db.giftCard.count({ where: { tenantId: demo.tenant.id } });

      const heldRes = await reissue(held.booking_id, demo.api_keys.manager);
      const unpaidRes = await reissue(unpaid.booking_id, demo.api_keys.manager);

      expect(heldRes.status).toBe(409);
      expect(heldRes.body).toEqual({ error: 'booking_not_cancellable', detail: 'the booking is held' });
      expect(unpaidRes.status).toBe(409);
      expect(unpaidRes.body.error).toBe('booking_not_refundable');
      const statuses = await t.deps.db.booking.findMany({
        where: { id: { in: [held.booking_id, unpaid.booking_id] } },
        select: { id: true, status: true, reissuedGiftCardId: true },
      });
      expect(statuses).toEqual(
        expect.arrayContaining([
          { id: held.booking_id, status: 'held', reissuedGiftCardId: null },
          { id: unpaid.booking_id, status: 'confirmed', reissuedGiftCardId: null },
        ]),
      );
      expect(await t.deps.db.giftCard.count({ where: { tenantId: demo.tenant.id } })).toBe(cardsBefore);
      expect(
        await t.deps.db.event.count({
          where: { name: 'booking.reissued', entityId: { in: [held.booking_id, unpaid.booking_id] } },
        }),
      ).toBe(0);
    });

    it('when a refund of the booking is still pending with the provider, then it is 409 refund_in_progress', async () => {
      const booked = await confirmedBooking(t, demo, { slotIndex: 2, guests: 1 });
      const payment = await t.deps.db.payment.findFirstOrThrow({ where: { bookingId: booked.booking_id } });
      await t.deps.db.refund.create({
        data: {
          tenantId: demo.tenant.id,
          bookingId: booked.booking_id,
          paymentId: payment.id,
          amountCents: 100,
          status: 'pending',
        },
      });

      const res = await reissue(booked.booking_id, demo.api_keys.manager);

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('refund_in_progress');
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } })).status).toBe(
        'confirmed',
      );
    });

    it('when the booking was already reissued, then a second reissue is 409 booking_not_cancellable', async () => {
      const booked = await confirmedBooking(t, demo, { slotIndex: 2, guests: 1 });
      expect((await reissue(booked.booking_id, demo.api_keys.manager)).status).toBe(200);

      const again = await reissue(booked.booking_id, demo.api_keys.manager);

      expect(again.status).toBe(409);
      expect(again.body).toEqual({ error: 'booking_not_cancellable', detail: 'the booking is cancelled' });
      expect(await eventsOf(booked.booking_id, 'booking.reissued')).toHaveLength(1);
    });

    it('when a staff key asks, then it is 403; without a key 401; and the booking stays confirmed', async () => {
      const booked = await confirmedBooking(t, demo, { slotIndex: 0, guests: 1 });

      const staff = await reissue(booked.booking_id, demo.api_keys.staff);
      const anonymous = await request(t.app).post(`/api/bookings/${booked.booking_id}/reissue-gift-card`);

      expect(staff.status).toBe(403);
      expect(staff.body.error).toBe('forbidden');
      expect(anonymous.status).toBe(401);
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } })).status).toBe(
        'confirmed',
      );
    });

    it("when another tenant's manager asks, or the id names no booking, then it is 404 booking_not_found", async () => {
      const booked = await confirmedBooking(t, demo, { slotIndex: 0, guests: 1 });

      const results = await Promise.all([
        reissue(booked.booking_id, other.api_keys.manager),
        reissue(randomUUID(), demo.api_keys.manager),
        reissue('not-a-uuid', demo.api_keys.manager),
      ]);

      for (const res of results) {
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('booking_not_found');
      }
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } })).status).toBe(
        'confirmed',
      );
    });

    it('when managers reissue the same booking at once, then one card is issued and the seats return once', async () => {
      const booked = await confirmedBooking(t, demo, { slotIndex: 0, guests: 2 });
      const seatsBefore = await seatsBooked(booked.slotId);
      const cardsBefore = await t.deps.db.giftCard.count({ where: { tenantId: demo.tenant.id } });

      const results = await Promise.all(
        Array.from({ length: 4 }, () => reissue(booked.booking_id, demo.api_keys.manager)),
      );

      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      expect(await t.deps.db.giftCard.count({ where: { tenantId: demo.tenant.id } })).toBe(cardsBefore + 1);
      expect(await seatsBooked(booked.slotId)).toBe(seatsBefore - 2);
      expect(await eventsOf(booked.booking_id, 'booking.reissued')).toHaveLength(1);
    });

    it('when a reissue is retried with the same Idempotency-Key, then the same card and code are answered again', async () => {
      const booked = await confirmedBooking(t, demo, { slotIndex: 0, guests: 1 });
      const key = `reissue-${randomUUID()}`;
      const send = () => reissue(booked.booking_id, demo.api_keys.manager).set('Idempotency-Key', key);

      const first = await send();
      const retry = await send();

      expect(first.status).toBe(200);
      expect(retry.status).toBe(200);
      expect(retry.get('Idempotent-Replayed')).toBe('true');
      expect(retry.body).toEqual(first.body);
      expect(await eventsOf(booked.booking_id, 'booking.reissued')).toHaveLength(1);
    });
  });
});
