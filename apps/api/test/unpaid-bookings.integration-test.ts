import type { DemoTenant } from '@booking/db';
import { expireHeldBookings } from '../src/bookings/expire-held-bookings';
import { issueGiftCard } from '../src/gift-cards/issue-gift-card';
import {
  createBooking,
  createIsolatedDatabase,
  createTestApp,
  seedTenant,
  type TestApp,
  waitUntil,
} from '@booking/test-kit';

// The sweep covers every tenant, so this file has a database of its own.
describe('held bookings nobody pays for', () => {
  let isolated: Awaited<ReturnType<typeof createIsolatedDatabase>>;
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase();
    t = createTestApp({ ...isolated.env, HOLD_TTL_SECONDS: '1' });
    demo = await seedTenant(t.deps);
  });
  afterAll(async () => {
    await t.close();
    await isolated.drop();
  });

  /** Resolves once PostgreSQL's clock, the one the sweep reads, is past the booking's hold expiry. */
  const holdExpired = (bookingId: string) =>
    waitUntil(
      async () => {
        const [row] = await t.deps.db.$queryRaw<{ expired: boolean }[]>`
          SELECT hold_expires_at < now() AS expired FROM bookings WHERE id = ${bookingId}::uuid`;
        return row!.expired;
      },
      { timeoutMs: 5_000, what: `the hold of booking ${bookingId} to expire` },
    );

  /** A one-guest booking of the kayak tour. */
  const book = (slotIndex: number, giftCardCode?: string) =>
    createBooking(t, demo, { slotIndex, guests: 1, giftCardCode });

  it('when a held booking outlives its hold by the grace period, then it is cancelled, its gift card part returned and booking.cancelled recorded once', async () => {
    const small = demo.gift_cards.find((card) => card.balance_cents === 500)!;
    const card = () =>
      t.deps.db.giftCard.findFirstOrThrow({ where: { tenantId: demo.tenant.id, codeLast4: small.code.slice(-4) } });
    const unpaid = await book(1, small.code);
    const paid = await book(2, demo.gift_cards[0]!.code);
    expect([unpaid.status, paid.status]).toEqual(['held', 'confirmed']);
    expect((await card()).balanceCents).toBe(0);
    await holdExpired(unpaid.booking_id);

    const first = await expireHeldBookings(t.deps, 0);
    const second = await expireHeldBookings(t.deps, 0);

    expect(first).toBe(1);
    expect(second).toBe(0);
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: unpaid.booking_id } });
    expect(booking.status).toBe('cancelled');
    expect((await card()).balanceCents).toBe(500);
    const events = await t.deps.db.event.findMany({
      where: { entityId: unpaid.booking_id, name: 'booking.cancelled' },
    });
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ booking_id: unpaid.booking_id, cancelled_by_user_id: null });
    expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: paid.booking_id } })).status).toBe('confirmed');
  });

  it('when one run expires several bookings paid in part by gift cards, then every card gets its part back', async () => {
    // Each booking's money locks (its payment, then its card) come after that booking's lock:
    // a run that cancelled them all in one transaction would take them out of the lock order.
    const currency = demo.experiences[0]!.currency;
    const cards = await t.deps.db.$transaction((tx) =>
      Promise.all([0, 1].map(() => issueGiftCard(tx, { tenantId: demo.tenant.id, amountCents: 300, currency }))),
    );
    const unpaid = [await book(4, cards[0]!.code), await book(5, cards[1]!.code)];
    expect(unpaid.map((booking) => booking.status)).toEqual(['held', 'held']);
    for (const booking of unpaid) await holdExpired(booking.booking_id);

    expect(await expireHeldBookings(t.deps, 0)).toBe(2);

    const after = await t.deps.db.giftCard.findMany({ where: { id: { in: cards.map((card) => card.id) } } });
    expect(after.map((card) => card.balanceCents)).toEqual([300, 300]);
    const statuses = await t.deps.db.booking.findMany({
      where: { id: { in: unpaid.map((booking) => booking.booking_id) } },
      select: { status: true },
    });
    expect(statuses.map((booking) => booking.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('when the grace period has not passed, then the held booking is left alone', async () => {
    const held = await book(3);
    await holdExpired(held.booking_id);

    await expireHeldBookings(t.deps, 3600);

    expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: held.booking_id } })).status).toBe('held');
  });

  it('when the late card payment of a held booking is being given back (refund due, or its automatic refund pending), then the sweep leaves it held and says nothing, and still cancels an unpaid one and one whose refund was due for over three days', async () => {
    const [due, pending, unpaid, stuck] = [await book(6), await book(6), await book(6), await book(6)];
    const latePayment = (bookingId: string, refundDue: boolean, createdAt = new Date()) =>
      t.deps.db.payment.create({
        data: {
          tenantId: demo.tenant.id,
          bookingId,
          method: 'card',
          providerReference: `pi_late_${bookingId}`,
          amountCents: 4_000,
          currency: demo.experiences[0]!.currency,
          status: 'succeeded',
          refundDue,
          refundedCents: refundDue ? 0 : 4_000,
          createdAt,
        },
      });
    await latePayment(due.booking_id, true);
    // Stripe refused its refund at every try of the payment's redeliveries.
    await latePayment(stuck.booking_id, true, new Date(Date.now() - 4 * 86_400_000));
    const payment = await latePayment(pending.booking_id, false);
    await t.deps.db.refund.create({
      data: {
        tenantId: demo.tenant.id,
        bookingId: pending.booking_id,
        paymentId: payment.id,
        providerRefundId: `re_pending_${pending.booking_id}`,
        amountCents: 4_000,
        status: 'pending',
        automatic: true,
      },
    });
    for (const booking of [due, pending, unpaid, stuck]) await holdExpired(booking.booking_id);

    await expireHeldBookings(t.deps, 0);

    const statusOf = async (bookingId: string) =>
      (await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } })).status;
    expect([
      await statusOf(due.booking_id),
      await statusOf(pending.booking_id),
      await statusOf(unpaid.booking_id),
      await statusOf(stuck.booking_id),
    ]).toEqual(['held', 'held', 'cancelled', 'cancelled']);
    const cancelled = await t.deps.db.event.findMany({
      where: { entityId: { in: [due.booking_id, pending.booking_id] }, name: 'booking.cancelled' },
    });
    expect(cancelled).toEqual([]);
  });
});
