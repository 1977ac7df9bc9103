import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { generateGiftCardCode, hashGiftCardCode } from '@booking/signing';
import {
  bookingBody,
  clientIp,
  createTestApp,
  type FakeStripe,
  kayak,
  placeHold,
  seedTenant,
  signedPaymentSucceededEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
} from '@booking/test-kit';

// gift_card_code on POST /api/bookings, on the real PostgreSQL and Redis; the app's Stripe SDK
// points at a fake Stripe so that a partly covered booking can be paid by card.

const WEBHOOK_SECRET = 'whsec_test';

type Experience = DemoTenant['experiences'][number];

async function newCard(t: TestApp, tenantId: string, balanceCents: number, currency = 'USD') {
  const code = generateGiftCardCode();
  const card = await t.deps.db.giftCard.create({
    data: { tenantId, codeHash: hashGiftCardCode(code), codeLast4: code.slice(-4), currency, balanceCents },
  });
  return { code, id: card.id };
}

async function balanceOf(t: TestApp, tenantId: string, code: string): Promise<number> {
  const card = await t.deps.db.giftCard.findUniqueOrThrow({
    where: { tenantId_codeHash: { tenantId, codeHash: hashGiftCardCode(code) } },
  });
  return card.balanceCents;
}

/** Holds seats from a fresh client address and posts the booking, returning the raw answer. */
async function bookWithCard(
  t: TestApp,
  demo: DemoTenant,
  experience: Experience,
  slotId: string,
  guests: number,
  code: string | undefined,
  seats = guests,
) {
  const ip = clientIp();
  const holdId = await placeHold(t, ip, experience, slotId, seats);
  const body = {
    ...bookingBody(demo, experience, slotId, holdId, guests),
    ...(code !== undefined && { gift_card_code: code }),
  };
  const res = await request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body);
  return { res, holdId, ip, body };
}

describe('gift cards on POST /api/bookings', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url, WEBHOOK_SECRET));
  });
  beforeEach(async () => {
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t?.close();
    await stopFakeStripe(fake);
  });

  it('when the card covers the total, then the booking is confirmed and paid at once, the card debited and the provider bypassed', async () => {
    const { experience, slot } = kayak(demo);
    const big = demo.gift_cards.find((card) => card.balance_cents === 1_000_000)!;
    const stripeCalls = fake.requests.length;

    // Three seats held, two booked: the third goes back with the hold.
    const { res, holdId } = await bookWithCard(t, demo, experience, slot.id, 2, big.code, 3);

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'confirmed',
      total_cents: 9000,
      currency: 'USD',
      gift_card_applied_cents: 9000,
      payment_complete: true,
    });
    expect(await balanceOf(t, demo.tenant.id, big.code)).toBe(1_000_000 - 9000);
    const booking = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: res.body.booking_id },
      include: { payments: true, giftCard: true },
    });
    expect(booking).toMatchObject({ status: 'confirmed', giftCardAppliedCents: 9000, paymentIntentId: null });
    expect(booking.giftCard!.codeLast4).toBe(big.code.slice(-4));
    expect(booking.payments).toEqual([
      expect.objectContaining({ method: 'gift_card', amountCents: 9000, currency: 'USD', status: 'succeeded' }),
    ]);
    expect((await t.deps.db.slot.findUniqueOrThrow({ where: { id: slot.id } })).seatsBooked).toBe(2);
    expect((await t.deps.holds.liveSeats([slot.id])).get(slot.id)).toBe(0);
    expect((await t.deps.holds.read(holdId)).hold).toBeNull();

    const events = await t.deps.db.event.findMany({ where: { entityId: booking.id }, orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => e.name)).toEqual(['booking.created', 'gift_card.redeemed', 'booking.confirmed']);
    const redeemed = events[1]!.data as Record<string, unknown>;
    expect(redeemed).toMatchObject({
      booking_id: booking.id,
      amount_cents: 9000,
      currency: 'USD',
      gift_card_id: booking.giftCardId,
    });
    expect(JSON.stringify(redeemed)).not.toContain(big.code);
    expect(events[2]!.data).toEqual({
      event_id: events[2]!.id,
      schema_version: 2,
      entity_type: 'booking',
      entity_id: booking.id,
      booking_id: booking.id,
      experience_id: experience.id,
      venue_id: demo.venue_id,
      slot_id: slot.id,
      customer_email: `guest-${holdId.slice(-12)}@example.com`,
      order_id: booking.id,
      is_primary_booking: true,
      charge_amount_cents: 9000,
      currency: 'USD',
      method: 'gift_card',
      net_paid_cents: 9000,
    });

    const intent = await request(t.app)
      .post(`/api/embed/bookings/${booking.id}/payment-intent`)
      .set('X-Forwarded-For', clientIp())
      .set('X-Booking-Token', res.body.booking_token);
    expect(intent.status).toBe(409);
    expect(intent.body.error).toBe('booking_not_payable');
    expect(fake.requests.length).toBe(stripeCalls);
  });

  it('when the card covers part of the total, then the booking is held and the card pays the rest of the PaymentIntent', async () => {
    const { experience, slot } = kayak(demo);
    const small = demo.gift_cards.find((card) => card.balance_cents === 500)!;

    const { res } = await bookWithCard(t, demo, experience, slot.id, 2, small.code);

    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'held',
      total_cents: 9000,
      gift_card_applied_cents: 500,
      payment_complete: false,
    });
    expect(await balanceOf(t, demo.tenant.id, small.code)).toBe(0);
    expect((await t.deps.db.slot.findUniqueOrThrow({ where: { id: slot.id } })).seatsBooked).toBe(0);
    expect((await t.deps.holds.liveSeats([slot.id])).get(slot.id)).toBe(2);
    const recorded = await t.deps.db.event.findMany({
      where: { entityId: res.body.booking_id },
      orderBy: { createdAt: 'asc' },
    });
    expect(recorded.map((e) => e.name)).toEqual(['booking.created', 'gift_card.redeemed']);
    expect(recorded[1]!.data).toMatchObject({ amount_cents: 500, booking_id: res.body.booking_id });

    const intent = await request(t.app)
      .post(`/api/embed/bookings/${res.body.booking_id}/payment-intent`)
      .set('X-Forwarded-For', clientIp())
      .set('X-Booking-Token', res.body.booking_token);

    expect(intent.status).toBe(200);
    expect(intent.body).toMatchObject({ amount_cents: 9000 - 500, currency: 'USD', publishable_key: 'pk_test_x' });
    const intentId = (intent.body.client_secret as string).split('_secret_')[0]!;
    expect(fake.intents.get(intentId)!.amount).toBe(8500);

    // The card pays the rest: the booking is confirmed for the whole total.
    const signed = signedPaymentSucceededEvent(fake.succeed(intentId), { secret: WEBHOOK_SECRET });
    await request(t.app)
      .post('/api/payments/stripe/webhook')
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', signed.signature)
      .send(signed.payload)
      .expect(200);
    const booking = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: res.body.booking_id },
      include: { payments: { orderBy: { createdAt: 'asc' } } },
    });
    expect(booking.status).toBe('confirmed');
    expect(booking.payments.map((p) => [p.method, p.amountCents])).toEqual([
      ['gift_card', 500],
      ['card', 8500],
    ]);
    const confirmed = await t.deps.db.event.findFirstOrThrow({
      where: { entityId: booking.id, name: 'booking.confirmed' },
    });
    expect(confirmed.data).toMatchObject({ method: 'card', charge_amount_cents: 9000, net_paid_cents: 9000 });
  });

  it('when the code is typed in lower case, without dashes or with spaces, then the card is still found', async () => {
    const { experience, slot } = kayak(demo);
    const card = await newCard(t, demo.tenant.id, 100_000);
    const variants = [card.code.toLowerCase(), card.code.replace(/-/g, ''), card.code.replace(/-/g, ' ').toLowerCase()];

    for (const variant of variants) {
      const { res } = await bookWithCard(t, demo, experience, slot.id, 1, variant);
      expect({ variant, status: res.status, applied: res.body.gift_card_applied_cents }).toEqual({
        variant,
        status: 201,
        applied: 4500,
      });
    }
    expect(await balanceOf(t, demo.tenant.id, card.code)).toBe(100_000 - 3 * 4500);
  });

  it("when the code is unknown or another tenant's, then it is 400 gift_card_not_found and no card is touched", async () => {
    const { experience, slot } = kayak(demo);
    const other = await seedTenant(t.deps);
    const foreign = other.gift_cards[0]!;

    const unknown = await bookWithCard(t, demo, experience, slot.id, 1, generateGiftCardCode());
    const outsider = await bookWithCard(t, demo, experience, slot.id, 1, foreign.code);

    for (const { res } of [unknown, outsider]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('gift_card_not_found');
    }
    expect(await balanceOf(t, other.tenant.id, foreign.code)).toBe(foreign.balance_cents);
    expect(await t.deps.db.booking.count({ where: { holdId: { in: [unknown.holdId, outsider.holdId] } } })).toBe(0);
    // The hold was not used up: the same request without the card goes through.
    const { gift_card_code: _ignored, ...withoutCard } = unknown.body as typeof unknown.body & {
      gift_card_code?: string;
    };
    const retry = await request(t.app).post('/api/bookings').set('X-Forwarded-For', unknown.ip).send(withoutCard);
    expect(retry.status).toBe(201);
  });

  it('when the card is in another currency, then it is 400 gift_card_currency_mismatch and the balance is untouched', async () => {
    const { experience, slot } = kayak(demo);
    const card = await newCard(t, demo.tenant.id, 50_000);
    await t.deps.db.giftCard.update({ where: { id: card.id }, data: { currency: 'EUR' } });

    const { res } = await bookWithCard(t, demo, experience, slot.id, 1, card.code);

    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'gift_card_currency_mismatch',
      detail: { gift_card_currency: 'EUR', booking_currency: 'USD' },
    });
    expect(await balanceOf(t, demo.tenant.id, card.code)).toBe(50_000);
  });

  it('when the card is empty, then it is 400 gift_card_empty', async () => {
    const { experience, slot } = kayak(demo);
    const card = await newCard(t, demo.tenant.id, 0);

    const { res, holdId } = await bookWithCard(t, demo, experience, slot.id, 1, card.code);

    expect(res.status).toBe(400);
    expect(res.body.error).toBe('gift_card_empty');
    expect(await t.deps.db.booking.count({ where: { holdId } })).toBe(0);
    expect(await balanceOf(t, demo.tenant.id, card.code)).toBe(0);
  });

  it('when the booking fails, then the card keeps its balance', async () => {
    const { experience } = kayak(demo);
    const slot = experience.slots[5]!;
    const card = await newCard(t, demo.tenant.id, 100_000);
    // The slot fills with holds, then an operator lowers its capacity: the first hold no longer fits.
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 4);
    await placeHold(t, clientIp(), experience, slot.id, 10);
    await placeHold(t, clientIp(), experience, slot.id, 10);
    await t.deps.db.slot.update({ where: { id: slot.id }, data: { capacity: 22 } });

    const res = await request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', ip)
      .send({ ...bookingBody(demo, experience, slot.id, holdId, 4), gift_card_code: card.code });

    expect(res.status).toBe(409);
    expect(res.body.error).toBe('capacity_exceeded');
    expect(await balanceOf(t, demo.tenant.id, card.code)).toBe(100_000);
    expect(await t.deps.db.booking.count({ where: { giftCardId: card.id } })).toBe(0);
  });

  it('when one hold is booked twice at once with a card, then the card is debited once', async () => {
    const { experience, slot } = kayak(demo);
    const card = await newCard(t, demo.tenant.id, 100_000);
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 2);
    const body = { ...bookingBody(demo, experience, slot.id, holdId, 2), gift_card_code: card.code };

    const replies = await Promise.all(
      [0, 1, 2].map(() => request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body)),
    );

    expect(replies.map((r) => r.status).sort()).toEqual([201, 404, 404]);
    expect(await balanceOf(t, demo.tenant.id, card.code)).toBe(100_000 - 9000);
    expect(await t.deps.db.payment.count({ where: { booking: { giftCardId: card.id } } })).toBe(1);
  });

  describe('a card spent by concurrent bookings', () => {
    let replica: TestApp;
    beforeAll(() => {
      // A second API replica: its own PostgreSQL pool and Redis connection, same databases.
      replica = createTestApp();
    });
    afterAll(() => replica?.close());

    it('when its balance covers only one booking in full, then it is never overdrawn and every applied cent is a debited cent', async () => {
      // Every booking is on its own slot, so nothing but the card itself serialises them. The
      // kayak's slots but the peak one (index 2) and the past one (7) sell at the base price.
      const experience = demo.experiences[0]!;
      const plain = [0, 1, 3, 4, 5, 6].map((index) => experience.slots[index]!.id);
      const guests = 2;
      const total = 4500 * guests;
      const original = total + total / 2;
      const card = await newCard(t, demo.tenant.id, original);
      const prepared = await Promise.all(
        plain.map(async (slotId, index) => {
          const app = index % 2 === 0 ? t : replica;
          const ip = clientIp();
          const holdId = await placeHold(app, ip, experience, slotId, guests);
          return {
            app,
            ip,
            body: { ...bookingBody(demo, experience, slotId, holdId, guests), gift_card_code: card.code },
          };
        }),
      );

      const replies = await Promise.all(
        prepared.map(({ app, ip, body }) =>
          request(app.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body),
        ),
      );

      const created = replies.filter((r) => r.status === 201);
      const refused = replies.filter((r) => r.status !== 201);
      const balance = await balanceOf(t, demo.tenant.id, card.code);
      expect(balance).toBeGreaterThanOrEqual(0);
      const applied = created.reduce((sum, r) => sum + (r.body.gift_card_applied_cents as number), 0);
      expect(applied).toBeLessThanOrEqual(original);
      expect(applied).toBe(original - balance);
      expect(balance).toBe(0);
      // One booking fully paid, one partly, the rest find the card empty.
      expect(created.map((r) => [r.body.status, r.body.gift_card_applied_cents]).sort()).toEqual([
        ['confirmed', total],
        ['held', total / 2],
      ]);
      expect(refused.map((r) => [r.status, r.body.error])).toEqual(
        Array(plain.length - 2).fill([400, 'gift_card_empty']),
      );
      const payments = await t.deps.db.payment.findMany({
        where: { method: 'gift_card', booking: { giftCardId: card.id } },
      });
      expect(payments.reduce((sum, p) => sum + p.amountCents, 0)).toBe(original - balance);
      const bookings = await t.deps.db.booking.findMany({ where: { giftCardId: card.id } });
      expect(bookings.reduce((sum, b) => sum + b.giftCardAppliedCents, 0)).toBe(original - balance);
    });
  });
});
