import request from 'supertest';
import type Stripe from 'stripe';
import type { DemoTenant } from '@booking/db';
import type { EventName } from '@booking/events';
import {
  bearer,
  cardPaidBooking,
  createTestApp,
  deliverStripeEvent,
  type FakePaymentIntent,
  keyIdOf,
  type FakeStripe,
  type RefundObject,
  seedTenant,
  signedRefundEvent,
  startFakeStripe,
  stopFakeStripe,
  stripeEnv,
  TEST_WEBHOOK_SECRET,
  type TestApp,
} from '@booking/test-kit';
import { createRefund } from '../src/refunds/create-refund';
import { settleStuckBookingRefunds } from '../src/refunds/settle-stuck-booking-refunds';

// Booking refunds Stripe never answered about, on the real PostgreSQL and Redis with the fake
// Stripe: the settle-stuck-booking-refunds job settles each once, from Stripe's record of it or by
// asking again under the same key, and runs on two processes at once share them.

interface CardBooking {
  bookingId: string;
  slotId: string;
  paidCents: number;
  intent: FakePaymentIntent;
}

let fake: FakeStripe;
let t: TestApp;
let replica: TestApp;
let demo: DemoTenant;

/** Booking refunds the job would claim now: those left pending by earlier runs against this database. */
const due = () =>
  t.deps.db.refund.count({
    where: {
      status: 'pending',
      OR: [
        { providerRefundId: null, updatedAt: { lte: new Date(Date.now() - 5 * 60_000) } },
        { providerRefundId: { not: null }, updatedAt: { lte: new Date(Date.now() - 24 * 3_600_000) } },
      ],
    },
  });

beforeAll(async () => {
  fake = await startFakeStripe();
  t = createTestApp(stripeEnv(fake.url));
  replica = createTestApp(stripeEnv(fake.url));
  // Refunds earlier runs left stuck (their Stripe is gone) would fill the first batches.
  for (let run = 0; run < 20 && (await due()) > 0; run += 1) await sweep();
});
beforeEach(async () => {
  demo = await seedTenant(t.deps);
});
afterEach(() => {
  fake.failNextRefunds(0);
  fake.failNextRefundsForTheirKeys(0);
  fake.rateLimitNextRefunds(0);
  jest.restoreAllMocks();
});
afterAll(async () => {
  await replica?.close();
  await t?.close();
  await stopFakeStripe(fake);
});

/** One run of the job, as the worker makes it on `app`'s process. */
function sweep(app = t, now?: Date, signal?: AbortSignal) {
  const { db, stripe, holds, logger } = app.deps;
  return settleStuckBookingRefunds({ db, stripe, holds, logger, signal }, now);
}
/** As if the refund had been made, or last asked about, `minutes` ago. */
const aged = (refundId: string, minutes: number) =>
  t.deps.db.refund.update({ where: { id: refundId }, data: { updatedAt: new Date(Date.now() - minutes * 60_000) } });
/** As if the refund had been made `hours` ago, and last asked about six minutes ago. */
const madeAgo = (refundId: string, hours: number) =>
  t.deps.db.refund.update({
    where: { id: refundId },
    data: { createdAt: new Date(Date.now() - hours * 3_600_000), updatedAt: new Date(Date.now() - 6 * 60_000) },
  });
/** Runs `meanwhile` once the job's next listing of one of these intents' refunds at Stripe has been read through. */
function afterNextListing(intentIds: string[], meanwhile: () => Promise<unknown>) {
  const refunds = t.deps.stripe!.refunds;
  const list = refunds.list.bind(refunds);
  let done = false;
  return jest.spyOn(refunds, 'list').mockImplementation(((params?: Stripe.RefundListParams) => {
    const listed = list(params);
    if (done || !intentIds.includes(params?.payment_intent ?? '')) return listed;
    done = true;
    return {
      async *[Symbol.asyncIterator]() {
        yield* listed;
        await meanwhile();
      },
    };
  }) as never);
}

const refund = (body: object) =>
  request(t.app).post('/api/payments/refunds').set('Authorization', bearer(demo.api_keys.manager)).send(body);
const refundRow = (id: string) => t.deps.db.refund.findUniqueOrThrow({ where: { id } });
const cardPayment = (bookingId: string) => t.deps.db.payment.findFirstOrThrow({ where: { bookingId, method: 'card' } });
const booking = (id: string) => t.deps.db.booking.findUniqueOrThrow({ where: { id } });
const seatsBooked = async (slotId: string) =>
  (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
const events = (bookingId: string, name: EventName) =>
  t.deps.db.event.findMany({ where: { entityId: bookingId, name } });
const refundsOf = (intentId: string) => fake.refunds.filter((made) => made.payment_intent === intentId);
/** Requests to Stripe about the payment's refunds: asked for (POST) and listed (GET). */
const calls = (intentId: string) =>
  ['POST', 'GET'].map(
    (method) => fake.requestsTo(method, '/v1/refunds').filter((call) => call.body.payment_intent === intentId).length,
  );

async function cardBooking(guests = 2): Promise<CardBooking> {
  const booked = await cardPaidBooking(t, fake, demo, { guests });
  return {
    bookingId: booked.booking_id,
    slotId: booked.slotId,
    paidCents: booked.intent.amount,
    intent: booked.intent,
  };
}

/**
 * A refund whose only try Stripe rate-limited: nothing was made at Stripe, so no notification will
 * come, yet a 429 does not say so; it stays pending (409) with its amount reserved.
 */
async function stuckRefund(paid: CardBooking, amountCents: number): Promise<string> {
  fake.rateLimitNextRefunds(1);
  const res = await refund({ booking_id: paid.bookingId, amount_cents: amountCents });
  fake.rateLimitNextRefunds(0);
  expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
  const refundId = res.body.detail.refund_id as string;
  expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
  return refundId;
}

describe('the settle-stuck-booking-refunds job', () => {
  it('when a refund’s only try was rate-limited, then it stays pending, its amount reserved, until the job asks again five minutes on and it succeeds once with its events', async () => {
    const paid = await cardBooking(3);
    const seatsBefore = await seatsBooked(paid.slotId);
    const refundId = await stuckRefund(paid, paid.paidCents);
    expect(refundsOf(paid.intent.id)).toHaveLength(0);
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: paid.paidCents });
    expect((await refund({ booking_id: paid.bookingId, amount_cents: 100 })).body.error).toBe('refund_exceeds_paid');

    // Its own request may still be at Stripe: not asked about yet.
    const before = calls(paid.intent.id);
    await sweep();
    expect(calls(paid.intent.id)).toEqual(before);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending' });

    await aged(refundId, 6);
    const warn = jest.spyOn(t.deps.logger, 'warn');
    await sweep();

    // Listed once (none there), then asked for once, under the refund's own key.
    expect(calls(paid.intent.id)).toEqual([before[0]! + 1, before[1]! + 1]);
    expect(fake.requestsTo('POST', '/v1/refunds').at(-1)!.idempotencyKey).toBe(`refund-${refundId}`);
    const [made] = refundsOf(paid.intent.id);
    expect(refundsOf(paid.intent.id)).toEqual([
      expect.objectContaining({
        amount: paid.paidCents,
        metadata: { booking_id: paid.bookingId, refund_id: refundId },
      }),
    ]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made!.id });
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: paid.paidCents, status: 'refunded' });
    expect(await booking(paid.bookingId)).toMatchObject({ status: 'refunded' });
    expect(await seatsBooked(paid.slotId)).toBe(seatsBefore - 3);
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
    expect(await events(paid.bookingId, 'booking.refunded')).toHaveLength(1);
    expect(warn).not.toHaveBeenCalledWith(expect.objectContaining({ refund_id: refundId }), expect.anything());

    // Settled: another run, however late, leaves it alone.
    await aged(refundId, 60);
    await sweep();
    expect(calls(paid.intent.id)).toEqual([before[0]! + 1, before[1]! + 1]);
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
  });

  it('when an earlier try did reach Stripe though its answer was lost, then the job settles it from Stripe’s record, refunds nothing twice, and its late notification books nothing twice', async () => {
    const paid = await cardBooking();
    const refundId = await stuckRefund(paid, 900);
    const made = (await t.deps.stripe!.refunds.create({
      payment_intent: paid.intent.id,
      amount: 900,
      metadata: { booking_id: paid.bookingId, refund_id: refundId },
    })) as unknown as RefundObject;

    await aged(refundId, 6);
    const [posts] = calls(paid.intent.id);
    await sweep();

    expect(calls(paid.intent.id)[0]).toBe(posts);
    expect(refundsOf(paid.intent.id)).toHaveLength(1);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: 900, status: 'succeeded' });
    expect(await booking(paid.bookingId)).toMatchObject({ status: 'confirmed' });
    expect((await deliverStripeEvent(t, signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET }))).status).toBe(200);
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: 900 });
  });

  it('when Stripe still does not answer about one refund, then the others of the run are settled and that one is put back five minutes, logged', async () => {
    const first = await cardBooking();
    const second = await cardBooking();
    const firstRefund = await stuckRefund(first, 500);
    const secondRefund = await stuckRefund(second, 500);
    await aged(firstRefund, 7);
    await aged(secondRefund, 6);
    // Whichever the run asks for first fails every try.
    fake.failNextRefunds(3);
    const now = new Date();
    const warn = jest.spyOn(t.deps.logger, 'warn');
    await sweep(t, now);

    const rows = await Promise.all([firstRefund, secondRefund].map(refundRow));
    expect(rows.map((row) => row.status).sort()).toEqual(['pending', 'succeeded']);
    const left = rows.find((row) => row.status === 'pending')!;
    expect(left.updatedAt).toEqual(now);
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ refund_id: left.id, err: expect.objectContaining({ code: 'refund_in_progress' }) }),
      'stuck booking refund: not settled',
    );
    const stuck = left.id === firstRefund ? first : second;
    expect(await cardPayment(stuck.bookingId)).toMatchObject({ refundedCents: 500 });

    // Put back: the next run does not ask about it again before five minutes.
    const before = calls(stuck.intent.id);
    await sweep();
    expect(calls(stuck.intent.id)).toEqual(before);
    await aged(left.id, 6);
    await sweep();
    expect(await refundRow(left.id)).toMatchObject({ status: 'succeeded' });
    expect(refundsOf(stuck.intent.id)).toHaveLength(1);
    expect(await events(stuck.bookingId, 'refund.created')).toHaveLength(1);
  });

  it('when Stripe does not know the payment (the service’s key is another account’s or mode’s), then the refund stays pending with its amount reserved, logged, and is never asked for again', async () => {
    const paid = await cardBooking();
    const refundId = await stuckRefund(paid, 600);
    fake.forgetIntent(paid.intent.id);
    const [posts, lists] = calls(paid.intent.id);

    await aged(refundId, 6);
    const warn = jest.spyOn(t.deps.logger, 'warn');
    await sweep();

    expect(calls(paid.intent.id)).toEqual([posts, lists! + 1]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: 600 });
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({
        refund_id: refundId,
        err: expect.objectContaining({
          code: 'refund_in_progress',
          detail: expect.objectContaining({ message: expect.stringContaining('does not know the payment') }),
        }),
      }),
      'stuck booking refund: not settled',
    );
    await aged(refundId, 6);
    await sweep();
    expect(calls(paid.intent.id)).toEqual([posts, lists! + 2]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending' });
  });

  it('when two processes run the job at once, then each stuck refund is listed and asked for once, and settled once', async () => {
    const stuck: { paid: CardBooking; refundId: string }[] = [];
    for (let made = 0; made < 4; made += 1) {
      const paid = await cardBooking();
      stuck.push({ paid, refundId: await stuckRefund(paid, 300) });
    }
    await Promise.all(stuck.map(({ refundId }) => aged(refundId, 6)));
    const before = stuck.map(({ paid }) => calls(paid.intent.id));

    await Promise.all([sweep(t), sweep(replica)]);

    for (const [index, { paid, refundId }] of stuck.entries()) {
      expect(calls(paid.intent.id)).toEqual([before[index]![0]! + 1, before[index]![1]! + 1]);
      expect(refundsOf(paid.intent.id)).toHaveLength(1);
      expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
      expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
      expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: 300 });
    }
  });

  it('when a stuck refund was made more than 23 hours ago (Stripe may have forgotten its key), then the job only looks it up: Stripe shows none, so it stays pending, is not sent again, is logged once each time it comes up, and reconcile sends it deliberately', async () => {
    const paid = await cardBooking();
    const refundId = await stuckRefund(paid, 700);
    await madeAgo(refundId, 24);
    const before = calls(paid.intent.id);
    const warn = jest.spyOn(t.deps.logger, 'warn');

    expect(await sweep()).toBe(0);

    expect(calls(paid.intent.id)).toEqual([before[0], before[1]! + 1]);
    expect(refundsOf(paid.intent.id)).toHaveLength(0);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: 700 });
    const aboutIt = () =>
      warn.mock.calls.filter(([fields]) => (fields as { refund_id?: string }).refund_id === refundId);
    expect(aboutIt()).toEqual([
      [
        expect.objectContaining({ booking_id: paid.bookingId }),
        expect.stringContaining('may have forgotten its key, so it is not sent again'),
      ],
    ]);

    // Next time it comes up: looked up and logged once again, never sent.
    await aged(refundId, 6);
    await sweep();
    expect(calls(paid.intent.id)).toEqual([before[0], before[1]! + 2]);
    expect(aboutIt()).toHaveLength(2);

    // An operator who knows the amount was not given back another way sends it.
    const res = await request(t.app)
      .post(`/api/refunds/${refundId}/reconcile`)
      .set('Authorization', bearer(demo.api_keys.manager));
    expect([res.status, res.body.status]).toEqual([200, 'succeeded']);
    expect(refundsOf(paid.intent.id)).toEqual([expect.objectContaining({ amount: 700 })]);
  });

  it('when a stuck refund more than 23 hours old is listed at Stripe as ours, then the job settles it once', async () => {
    const paid = await cardBooking();
    const refundId = await stuckRefund(paid, 800);
    const made = (await t.deps.stripe!.refunds.create({
      payment_intent: paid.intent.id,
      amount: 800,
      metadata: { booking_id: paid.bookingId, refund_id: refundId },
    })) as unknown as RefundObject;
    await madeAgo(refundId, 30);
    const [posts] = calls(paid.intent.id);

    expect(await sweep()).toBe(1);

    expect(calls(paid.intent.id)[0]).toBe(posts);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
  });

  it('when a stuck refund was made 22 hours ago, then Stripe still keeps its key and the job sends it again', async () => {
    const paid = await cardBooking();
    const refundId = await stuckRefund(paid, 650);
    await madeAgo(refundId, 22);

    await sweep();

    expect(refundsOf(paid.intent.id)).toEqual([expect.objectContaining({ amount: 650 })]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
  });

  it('when a notification settles the refund after the job found none at Stripe, then the job does not send it again', async () => {
    const paid = await cardBooking();
    const refundId = await stuckRefund(paid, 550);
    await aged(refundId, 6);
    // An earlier try's refund shows up, and its notification settles ours, between the job's look and its ask.
    let made: RefundObject | undefined;
    afterNextListing([paid.intent.id], async () => {
      made = (await t.deps.stripe!.refunds.create({
        payment_intent: paid.intent.id,
        amount: 550,
        metadata: { booking_id: paid.bookingId, refund_id: refundId },
      })) as unknown as RefundObject;
      const delivered = await deliverStripeEvent(t, signedRefundEvent(made, { secret: TEST_WEBHOOK_SECRET }));
      expect(delivered.status).toBe(200);
    });
    const [posts] = calls(paid.intent.id);

    await sweep();

    expect(calls(paid.intent.id)[0]).toBe(posts! + 1);
    expect(refundsOf(paid.intent.id)).toEqual([expect.objectContaining({ id: made!.id })]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made!.id });
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: 550 });
  });

  it('when four minutes have passed since the run claimed its refunds, then it asks about none of them, and they come up again once the claim runs out', async () => {
    const paid = await cardBooking();
    const refundId = await stuckRefund(paid, 450);
    await aged(refundId, 10);
    const before = calls(paid.intent.id);
    const claimedAt = new Date(Date.now() - 4.5 * 60_000);

    expect(await sweep(t, claimedAt)).toBe(0);

    expect(calls(paid.intent.id)).toEqual(before);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', updatedAt: claimedAt });
    await aged(refundId, 6);
    await sweep();
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
  });

  it('when the worker shuts down during a run, then the run stops after the refund it is on, and the rest come up again later', async () => {
    const stuck: { paid: CardBooking; refundId: string }[] = [];
    for (let made = 0; made < 2; made += 1) {
      const paid = await cardBooking();
      stuck.push({ paid, refundId: await stuckRefund(paid, 350) });
    }
    await Promise.all(stuck.map(({ refundId }) => aged(refundId, 6)));
    const before = stuck.map(({ paid }) => calls(paid.intent.id));
    const stopping = new AbortController();
    afterNextListing(
      stuck.map(({ paid }) => paid.intent.id),
      async () => stopping.abort(),
    );

    expect(await sweep(t, undefined, stopping.signal)).toBe(1);

    const rows = await Promise.all(stuck.map(({ refundId }) => refundRow(refundId)));
    expect(rows.map((row) => row.status).sort()).toEqual(['pending', 'succeeded']);
    const leftIndex = rows.findIndex((row) => row.status === 'pending');
    const left = stuck[leftIndex]!;
    expect(calls(left.paid.intent.id)).toEqual(before[leftIndex]);
    await aged(left.refundId, 6);
    await sweep();
    expect(await refundRow(left.refundId)).toMatchObject({ status: 'succeeded' });
    // Stopped before it claims anything.
    expect(await sweep(t, undefined, stopping.signal)).toBe(0);
  });

  it('when the booking is named in upper case (the use case does not rely on the route lower-casing it), then Stripe is sent the booking’s stored id, so the job asks again with the very same parameters under the key', async () => {
    const paid = await cardBooking();
    const { db, stripe, holds } = t.deps;
    const operator = {
      tenantId: demo.tenant.id,
      keyId: await keyIdOf(t, demo.api_keys.manager),
      role: 'manager' as const,
      scopes: [],
    };
    fake.rateLimitNextRefunds(1);
    const unanswered = await createRefund({ db, stripe, holds }, operator, {
      bookingId: paid.bookingId.toUpperCase(),
      amountCents: 250,
      keepBookingActive: false,
    }).catch((error: unknown) => error);
    fake.rateLimitNextRefunds(0);
    expect(unanswered).toMatchObject({ code: 'refund_in_progress' });
    const refundId = (unanswered as { detail: { refund_id: string } }).detail.refund_id;
    await aged(refundId, 6);

    await sweep();

    const sent = fake
      .requestsTo('POST', '/v1/refunds')
      .filter((call) => call.idempotencyKey === `refund-${refundId}`)
      .map((call) => call.body);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toEqual(sent[1]);
    expect(sent[0]).toMatchObject({ metadata: { booking_id: paid.bookingId, refund_id: refundId } });
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
  });

  it('when Stripe failed the first send with its own 500, then it answers that 500 again under the key, and the refund stays pending, refunding nothing', async () => {
    const paid = await cardBooking();
    fake.failNextRefundsForTheirKeys(1);
    const res = await refund({ booking_id: paid.bookingId, amount_cents: 300 });
    expect([res.status, res.body.error]).toEqual([409, 'refund_in_progress']);
    const refundId = res.body.detail.refund_id as string;
    await aged(refundId, 6);
    const warn = jest.spyOn(t.deps.logger, 'warn');

    await sweep();

    expect(fake.requestsTo('POST', '/v1/refunds').at(-1)).toMatchObject({
      idempotencyKey: `refund-${refundId}`,
      status: 500,
    });
    expect(refundsOf(paid.intent.id)).toHaveLength(0);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: null });
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ refund_id: refundId, err: expect.objectContaining({ code: 'refund_in_progress' }) }),
      'stuck booking refund: not settled',
    );
  });
});

describe('the settle-stuck-booking-refunds job, for refunds Stripe answered pending', () => {
  /** A card-paid booking refunded (in full unless told); Stripe answers the refund pending and never notifies. */
  async function pendingRefund(amountCents?: number) {
    const paid = await cardBooking();
    fake.answerNextRefunds('pending');
    const res = await refund({ booking_id: paid.bookingId, amount_cents: amountCents ?? paid.paidCents });
    expect([res.status, res.body.status]).toEqual([202, 'pending']);
    const refundId = res.body.refund_id as string;
    const [made] = refundsOf(paid.intent.id);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', providerRefundId: made!.id });
    return { paid, refundId, made: made! };
  }

  it('when its notification never comes, then Stripe is asked about it a day on, again a day later while pending, and its outcome is settled once, never sent again', async () => {
    const { paid, refundId, made } = await pendingRefund();
    const before = calls(paid.intent.id);

    // Stripe has answered about it: not asked about before a day.
    await aged(refundId, 60);
    await sweep();
    await aged(refundId, 23 * 60);
    await sweep();
    expect(calls(paid.intent.id)).toEqual(before);

    // A day on: listed, still pending at Stripe, put back another day.
    await aged(refundId, 25 * 60);
    const now = new Date();
    await sweep(t, now);
    expect(calls(paid.intent.id)).toEqual([before[0], before[1]! + 1]);
    expect(await refundRow(refundId)).toMatchObject({ status: 'pending', updatedAt: now });
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: paid.paidCents });
    expect(await booking(paid.bookingId)).toMatchObject({ status: 'confirmed' });
    await sweep();
    expect(calls(paid.intent.id)).toEqual([before[0], before[1]! + 1]);

    made.status = 'succeeded';
    await aged(refundId, 25 * 60);
    await sweep();

    expect(calls(paid.intent.id)).toEqual([before[0], before[1]! + 2]);
    expect(refundsOf(paid.intent.id)).toHaveLength(1);
    expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded', providerRefundId: made.id });
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: paid.paidCents });
    expect(await booking(paid.bookingId)).toMatchObject({ status: 'refunded' });
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
    expect(await events(paid.bookingId, 'booking.refunded')).toHaveLength(1);
    expect(await seatsBooked(paid.slotId)).toBe(0);

    await aged(refundId, 25 * 60);
    await sweep();
    expect(calls(paid.intent.id)).toEqual([before[0], before[1]! + 2]);
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
  });

  it('when Stripe cancels it, then the job fails it a day on and its amount is refundable again', async () => {
    const { paid, refundId, made } = await pendingRefund(400);
    made.status = 'canceled';

    await aged(refundId, 25 * 60);
    await sweep();

    expect(await refundRow(refundId)).toMatchObject({ status: 'failed', providerRefundId: made.id });
    expect(await cardPayment(paid.bookingId)).toMatchObject({ refundedCents: 0 });
    expect(await booking(paid.bookingId)).toMatchObject({ status: 'confirmed' });
    expect(await events(paid.bookingId, 'refund.created')).toHaveLength(0);
    expect(refundsOf(paid.intent.id)).toHaveLength(1);
  });

  it('when two processes run the job at once, then each such refund is listed once and settled once', async () => {
    const unsettled = [];
    for (let made = 0; made < 4; made += 1) unsettled.push(await pendingRefund());
    for (const { refundId, made } of unsettled) {
      made.status = 'succeeded';
      await aged(refundId, 25 * 60);
    }
    const before = unsettled.map(({ paid }) => calls(paid.intent.id));

    await Promise.all([sweep(t), sweep(replica)]);

    for (const [index, { paid, refundId }] of unsettled.entries()) {
      expect(calls(paid.intent.id)).toEqual([before[index]![0], before[index]![1]! + 1]);
      expect(await refundRow(refundId)).toMatchObject({ status: 'succeeded' });
      expect(await events(paid.bookingId, 'refund.created')).toHaveLength(1);
      expect(await booking(paid.bookingId)).toMatchObject({ status: 'refunded' });
    }
  });
});
