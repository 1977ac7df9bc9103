import { randomUUID } from 'node:crypto';
import request from 'supertest';
import Stripe from 'stripe';
import type { DemoTenant } from '@booking/db';
import { GIFT_CARD_SALE_PURPOSE } from '../src/gift-cards/verify-sale-payment';
import {
  bearer,
  cardPaidBooking,
  createTestApp,
  type FakeStripe,
  freePort,
  heldBooking,
  payByCard,
  seedTenant,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  type TestApp,
} from '@booking/test-kit';

// POST /api/gift-cards/sell paid by card: which provider payments may back a sale. One payment
// backs at most one thing (one sale or one booking), in the tenant it was made for, and never a
// booking's or a refunded one. The app's real Stripe SDK talks to a fake Stripe on 127.0.0.1.

describe('gift card sale payment references', () => {
  let fake: FakeStripe;
  let stripe: Stripe;
  let t: TestApp;
  let a: DemoTenant;
  let b: DemoTenant;

  beforeAll(async () => {
    fake = await startFakeStripe();
    // The till's own Stripe integration, making and refunding PaymentIntents on the fake.
    stripe = new Stripe('sk_test_x', { host: '127.0.0.1', port: fake.port, protocol: 'http' });
    t = createTestApp(stripeEnv(fake.url));
    [a, b] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
  });
  afterAll(async () => {
    await t.close();
    await stopFakeStripe(fake);
  });

  const saleMetadata = (tenant: DemoTenant) => ({ tenant_id: tenant.tenant.id, purpose: GIFT_CARD_SALE_PURPOSE });

  /** A PaymentIntent with `metadata`, succeeded unless told otherwise. */
  async function intent(metadata: Record<string, string>, amountCents = 5000): Promise<string> {
    const created = await stripe.paymentIntents.create({ amount: amountCents, currency: 'usd', metadata });
    fake.succeed(created.id);
    return created.id;
  }

  const sell = (tenant: DemoTenant, reference: string, amountCents = 5000) =>
    request(t.app)
      .post('/api/gift-cards/sell')
      .set('Authorization', bearer(tenant.api_keys.admin))
      .send({ amount_cents: amountCents, currency: 'USD', payment_method: 'card', payment_reference: reference });

  const salesWith = (reference: string) => t.deps.db.giftCardSale.count({ where: { paymentReference: reference } });
  const cardsOf = (tenant: DemoTenant) => t.deps.db.giftCard.count({ where: { tenantId: tenant.tenant.id } });

  /** A held one-guest booking of `tenant` and its PaymentIntent, which the fake marks succeeded. */
  async function unrecordedBookingPayment(tenant: DemoTenant, slotIndex: number) {
    const booked = await heldBooking(t, tenant, { slotIndex, guests: 1 });
    const pi = await request(t.app)
      .post(`/api/embed/bookings/${booked.booking_id}/payment-intent`)
      .set('X-Forwarded-For', booked.ip)
      .set('X-Booking-Token', booked.booking_token);
    expect(pi.status).toBe(200);
    const paid = fake.succeed((pi.body.client_secret as string).split('_secret_')[0]!);
    return { booked, intent: paid };
  }

  /** The answer must refuse the sale (of the payment's very amount), with no card issued to the seller. */
  async function expectRefused(tenant: DemoTenant, reference: string, status: number, error: string) {
    const cardsBefore = await cardsOf(tenant);

    const res = await sell(tenant, reference, fake.intents.get(reference)!.amount_received);

    expect({ status: res.status, error: res.body.error }).toEqual({ status, error });
    expect(await cardsOf(tenant)).toBe(cardsBefore);
    return res;
  }

  it("when tenant B sells with tenant A's booking payment that A has recorded, then it is 409 payment_reference_used", async () => {
    const { intent: paid } = await cardPaidBooking(t, fake, a, { slotIndex: 0, guests: 1 });

    await expectRefused(b, paid.id, 409, 'payment_reference_used');
    expect(await salesWith(paid.id)).toBe(0);
  });

  it("when tenant B sells with tenant A's booking payment before A has recorded it, then it is 400 payment_reference_invalid and A's booking is still confirmed by it", async () => {
    const { booked, intent: paid } = await unrecordedBookingPayment(a, 1);

    const res = await expectRefused(b, paid.id, 400, 'payment_reference_invalid');
    expect(JSON.stringify(res.body)).not.toContain(a.tenant.id);

    await payByCard(t, fake, booked, booked.ip);
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
    expect(booking.status).toBe('confirmed');
    expect(await salesWith(paid.id)).toBe(0);
  });

  it("when a tenant sells with its own booking's payment before it is recorded, then it is 400 payment_reference_invalid", async () => {
    const { intent: paid } = await unrecordedBookingPayment(a, 2);

    const res = await expectRefused(a, paid.id, 400, 'payment_reference_invalid');
    expect(res.body.detail).toMatch(/booking/);
  });

  it.each([
    ['no metadata', () => ({})],
    ['only a tenant_id', () => ({ tenant_id: a.tenant.id })],
    ['only the purpose', () => ({ purpose: GIFT_CARD_SALE_PURPOSE })],
    ["another tenant's id", () => saleMetadata(b)],
    ['another purpose', () => ({ tenant_id: a.tenant.id, purpose: 'donation' })],
    ['purpose booking', () => ({ tenant_id: a.tenant.id, purpose: 'booking' })],
    ['a booking_id besides the sale metadata', () => ({ ...saleMetadata(a), booking_id: randomUUID() })],
  ])('when the payment carries %s, then it is 400 payment_reference_invalid', async (_case, metadata) => {
    const reference = await intent(metadata());

    await expectRefused(a, reference, 400, 'payment_reference_invalid');
    expect(await salesWith(reference)).toBe(0);
  });

  it('when Stripe cannot be reached, then the sale is 503 service_unavailable and no card is sold', async () => {
    const reference = await intent(saleMetadata(a));
    // The same database and Redis, with Stripe at an address nothing listens on.
    const away = createTestApp(stripeEnv(`http://127.0.0.1:${await freePort()}`));
    try {
      const cardsBefore = await cardsOf(a);
      const res = await request(away.app)
        .post('/api/gift-cards/sell')
        .set('Authorization', bearer(a.api_keys.admin))
        .send({ amount_cents: 5000, currency: 'USD', payment_method: 'card', payment_reference: reference });

      expect({ status: res.status, error: res.body.error }).toEqual({ status: 503, error: 'service_unavailable' });
      expect(await cardsOf(a)).toBe(cardsBefore);
    } finally {
      await away.close();
    }
  });

  it('when the payment was made for this sale, then the card is sold', async () => {
    const reference = await intent(saleMetadata(a));

    const res = await sell(a, reference);

    expect(res.status).toBe(201);
    expect(await salesWith(reference)).toBe(1);
  });

  it.each([
    ['in full', undefined],
    ['in part', 1],
  ])('when the payment was refunded %s, then it is 400 payment_reference_invalid', async (_case, amount) => {
    const reference = await intent(saleMetadata(a));
    await stripe.refunds.create({ payment_intent: reference, ...(amount !== undefined && { amount }) });

    const res = await expectRefused(a, reference, 400, 'payment_reference_invalid');
    expect(res.body.detail).toMatch(/refunded/);
  });

  it('when the same payment is sold again, by its tenant or another, then only the first sale stands', async () => {
    const reference = await intent(saleMetadata(a));
    expect((await sell(a, reference)).status).toBe(201);

    await expectRefused(a, reference, 409, 'payment_reference_used');
    await expectRefused(b, reference, 409, 'payment_reference_used');
    expect(await salesWith(reference)).toBe(1);
  });

  it('when both tenants race to sell the same payment, then exactly one card is sold, to the tenant it was made for', async () => {
    const reference = await intent(saleMetadata(a));
    const [cardsA, cardsB] = [await cardsOf(a), await cardsOf(b)];

    const results = await Promise.all([a, b, a, b, a, b].map((tenant) => sell(tenant, reference)));

    expect(results.filter((res) => res.status === 201)).toHaveLength(1);
    for (const res of results.filter((r) => r.status !== 201)) {
      expect(['payment_reference_used', 'payment_reference_invalid']).toContain(res.body.error);
    }
    expect(await t.deps.db.giftCardSale.findMany({ where: { paymentReference: reference } })).toEqual([
      expect.objectContaining({ tenantId: a.tenant.id }),
    ]);
    expect([await cardsOf(a), await cardsOf(b)]).toEqual([cardsA + 1, cardsB]);
  });

  it('when a second sale row names a payment another tenant sold with, then the database refuses it', async () => {
    const sold = await intent(saleMetadata(a));
    const other = await intent(saleMetadata(b));
    expect((await sell(a, sold)).status).toBe(201);
    expect((await sell(b, other)).status).toBe(201);

    await expect(
      t.deps.db.giftCardSale.updateMany({ where: { paymentReference: other }, data: { paymentReference: sold } }),
    ).rejects.toThrow(/Unique constraint/);
    expect(await salesWith(sold)).toBe(1);
  });
});
