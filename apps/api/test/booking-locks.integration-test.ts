import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { recordProviderAnswer } from '../src/refunds/create-refund';
import {
  bearer,
  unreachableStripeUrl,
  cardPaidBooking,
  confirmedBooking,
  createTestApp,
  deliverStripeEvent,
  type FakeStripe,
  type RefundObject,
  seedTenant,
  signedChargeRefundedEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';

// The booking lock, where it meets other locks of the same transaction and other transactions:
// re-locking a booking already held, and waiting behind a transfer that changes its customer.
describe('booking locks', () => {
  let fake: FakeStripe;
  let t: TestApp;
  let demo: DemoTenant;
  let offline: TestApp;

  beforeAll(async () => {
    fake = await startFakeStripe();
    t = createTestApp(stripeEnv(fake.url));
    demo = await seedTenant(t.deps);
    offline = createTestApp(stripeEnv(await unreachableStripeUrl()));
  });
  afterAll(async () => {
    await offline?.close();
    await t?.close();
    await stopFakeStripe(fake);
  });

  it('when charge.refunded lists two refunds of ours, then both settle in one transaction that locks their booking twice', async () => {
    const booked = await cardPaidBooking(t, fake, demo, { guests: 2 });
    for (const amount of [300, 400]) {
      const res = await request(t.app)
        .post('/api/payments/refunds')
        .set('Authorization', bearer(demo.api_keys.manager))
        .send({ booking_id: booked.booking_id, amount_cents: amount, reason: 'partial' });
      expect(res.status).toBe(201);
    }
    const made = fake.refunds.filter((r) => r.payment_intent === booked.intent.id) as unknown as RefundObject[];
    expect(made).toHaveLength(2);
    const res = await deliverStripeEvent(
      t,
      signedChargeRefundedEvent(booked.intent, made, { secret: TEST_WEBHOOK_SECRET }),
    );
    expect(res.status).toBe(200);
    const settled = await t.deps.db.refund.findMany({ where: { bookingId: booked.booking_id } });
    expect(settled.map((refund) => refund.status)).toEqual(['succeeded', 'succeeded']);
  });

  /** Resolves once a statement locking a booking row waits on another transaction. */
  const waitingOnBookingLock = (what: string) =>
    waitUntil(
      async () => {
        const [row] = await t.deps.db.$queryRaw<{ n: bigint }[]>`
          SELECT count(*) AS n FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%FROM bookings%FOR UPDATE%'`;
        return Number(row!.n) > 0;
      },
      { what },
    );

  it('when a cancel waits behind a transfer of the same booking, then it finds the booking and cancels it', async () => {
    const booking = await confirmedBooking(t, demo, {});
    const otherBooking = await confirmedBooking(t, demo, {});
    const otherCustomer = (await t.deps.db.booking.findUniqueOrThrow({ where: { id: otherBooking.booking_id } }))
      .customerId;

    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    // What transfer-booking's transaction does: lock the booking, point it at another customer.
    const transfer = t.deps.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM bookings WHERE id = ${booking.booking_id}::uuid FOR UPDATE`;
        await tx.booking.update({ where: { id: booking.booking_id }, data: { customerId: otherCustomer } });
        locked();
        await released;
      },
      { timeout: 20_000 },
    );
    await isLocked;
    const cancel = request(t.app)
      .post(`/api/bookings/${booking.booking_id}/cancel`)
      .set('Authorization', bearer(demo.api_keys.manager))
      .then((r) => r);
    await waitingOnBookingLock('the cancel waiting on the booking lock');
    release();
    await transfer;
    const res = await cancel;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ booking_id: booking.booking_id, status: 'cancelled' });
  });

  async function blockWithTransfer(bookingId: string, otherCustomer: string) {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const done = t.deps.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM bookings WHERE id = ${bookingId}::uuid FOR UPDATE`;
        await tx.booking.update({ where: { id: bookingId }, data: { customerId: otherCustomer } });
        locked();
        await released;
      },
      { timeout: 20_000 },
    );
    await isLocked;
    return { release, done };
  }

  it("when the provider's answer to a refund is recorded while a transfer holds the booking, then the refund is settled", async () => {
    const booked = await cardPaidBooking(t, fake, demo, { guests: 2 });
    const other = await confirmedBooking(t, demo, {});
    const otherCustomer = (await t.deps.db.booking.findUniqueOrThrow({ where: { id: other.booking_id } })).customerId;
    const stuck = await request(offline.app)
      .post('/api/payments/refunds')
      .set('Authorization', bearer(demo.api_keys.manager))
      .send({ booking_id: booked.booking_id, amount_cents: 500, reason: 'x' });
    expect(stuck.status).toBe(409);
    const refundId = stuck.body.detail.refund_id as string;

    const blocker = await blockWithTransfer(booked.booking_id, otherCustomer);
    const recording = recordProviderAnswer(t.deps, booked.booking_id, refundId, {
      status: 'succeeded',
      providerRefundId: `re_${randomUUID()}`,
    }).then(
      (body) => ({ ok: body.status }),
      (error: unknown) => ({ error: (error as { code?: string }).code ?? String(error) }),
    );
    await waitingOnBookingLock('the recording waiting on the booking lock');
    blocker.release();
    await blocker.done;
    const outcome = await recording;
    const refundRow = await t.deps.db.refund.findUniqueOrThrow({ where: { id: refundId } });
    expect({ outcome, status: refundRow.status }).toEqual({ outcome: { ok: 'succeeded' }, status: 'succeeded' });
  });
});
