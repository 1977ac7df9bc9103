import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DemoTenant } from '@booking/db';
import { bookingBody, clientIp, createTestApp, holdExpired, seedTenant, type TestApp } from '@booking/test-kit';

// "No oversell", raced for real: two API replicas (two app instances, each on its own loopback
// port) share PostgreSQL and Redis, and clients hit both at once over HTTP, so requests overlap
// in both processes' event loops and in the databases rather than queueing in one supertest app.

interface Replica {
  name: string;
  t: TestApp;
  server: http.Server;
  url: string;
}

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

// Every client below has its own address anyway; the raised limits keep the races about capacity.
const REPLICA_ENV = { RATE_LIMIT_HOLDS_PER_MINUTE: '10000', RATE_LIMIT_BOOKINGS_PER_MINUTE: '10000' };
const REQUEST_TIMEOUT_MS = 10_000;

async function startReplica(name: string, env: Record<string, string> = {}): Promise<Replica> {
  const t = createTestApp({ ...REPLICA_ENV, ...env });
  const server = http.createServer(t.app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const replica = { name, t, server, url: `http://127.0.0.1:${port}` };
  // Open the PostgreSQL and Redis connections before anything is raced.
  const ready = await fetch(`${replica.url}/readyz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  if (ready.status !== 200) throw new Error(`replica ${name} not ready: ${ready.status} ${await ready.text()}`);
  return replica;
}

async function stopReplica(replica: Replica | undefined): Promise<void> {
  if (!replica) return;
  await new Promise<void>((resolve) => {
    replica.server.close(() => resolve());
    replica.server.closeAllConnections();
  });
  await replica.t.close();
}

async function post(
  replica: Replica,
  path: string,
  ip: string,
  body: object,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const res = await fetch(`${replica.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip, ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** The spec's Error shape: `{error: <code string>, detail?: any}` and nothing else. */
function expectErrorShape(reply: Reply): void {
  expect(typeof reply.body.error).toBe('string');
  expect(Object.keys(reply.body).every((key) => key === 'error' || key === 'detail')).toBe(true);
}

function count(replies: Reply[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const reply of replies) {
    const key = reply.status < 400 ? String(reply.status) : `${reply.status} ${String(reply.body.error)}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
  return tally;
}

describe('capacity under concurrent holds and bookings on two replicas', () => {
  let a: Replica | undefined;
  let b: Replica | undefined;
  let short: Replica | undefined;
  let demo: DemoTenant;

  beforeAll(async () => {
    a = await startReplica('a');
    b = await startReplica('b');
    demo = await seedTenant(a.t.deps);
  });
  afterAll(async () => {
    await Promise.all([stopReplica(a), stopReplica(b), stopReplica(short)]);
  });

  const replicas = () => [a!, b!];
  const via = (i: number) => replicas()[i % 2]!;

  /**
   * Reads what capacity is made of, straight from PostgreSQL and Redis. A booking's seats are
   * counted either in slots.seats_booked or, while it is `held`, by its converted hold in Redis
   * (`carried`); `taken` is every booking once plus the holds that are not bookings yet.
   */
  async function ledger(slotId: string) {
    const { db, holds } = a!.t.deps;
    const slot = await db.slot.findUniqueOrThrow({
      where: { id: slotId },
      select: { capacity: true, seatsBooked: true },
    });
    const rows = await db.booking.findMany({
      where: { slotId, status: { in: ['held', 'confirmed'] } },
      select: { holdId: true, guestCount: true },
    });
    const live = (await holds.liveSeats([slotId])).get(slotId) ?? 0;
    let carried = 0;
    for (const row of rows) {
      const { hold, now } = await holds.read(row.holdId);
      if (hold && hold.bookingId !== null && hold.expiresAt > now) carried += hold.seats;
    }
    const bookedSeats = rows.reduce((sum, row) => sum + row.guestCount, 0);
    return {
      capacity: slot.capacity,
      seatsBooked: slot.seatsBooked,
      bookings: rows.length,
      bookedSeats,
      live,
      carried,
      taken: bookedSeats + live - carried,
    };
  }

  /**
   * Every booking's seats are counted exactly once (in seats_booked or by its hold), and the
   * bookings plus the holds that are not bookings yet fit in the slot.
   */
  function expectConsistent(l: Awaited<ReturnType<typeof ledger>>): void {
    expect(l.seatsBooked + l.carried).toBe(l.bookedSeats);
    expect(l.taken).toBeLessThanOrEqual(l.capacity);
  }

  it('when 40 clients race for 10 seats on two replicas and the winners book while others keep holding, then the slot is never oversold', async () => {
    const experience = demo.experiences[0]!; // party 1..12
    const slot = experience.slots[3]!;
    const CAPACITY = 10;
    await a!.t.deps.db.slot.update({ where: { id: slot.id }, data: { capacity: CAPACITY } });
    const holdBody = (seats: number) => ({ slot_id: slot.id, experience_id: experience.id, seats });

    // Wave 1: 40 holds of 1 to 3 seats (80 seats asked for 10), alternating replicas, all at once.
    const wave1 = Array.from({ length: 40 }, (_, i) => ({ ip: clientIp(), seats: 1 + (i % 3) }));
    const held = await Promise.all(wave1.map((c, i) => post(via(i), '/api/bookings/hold', c.ip, holdBody(c.seats))));

    for (const reply of held) {
      if (reply.status !== 200) {
        expect(reply.status).toBe(409);
        expect(reply.body.error).toBe('insufficient_capacity');
        expectErrorShape(reply);
      }
    }
    const winners = wave1
      .map((c, i) => ({ ...c, holdId: held[i]!.body.hold_id as string, replica: i % 2 }))
      .filter((_, i) => held[i]!.status === 200);
    const heldSeats = winners.reduce((sum, w) => sum + w.seats, 0);
    expect(winners.length).toBeGreaterThan(0);
    expect(winners.length).toBeLessThan(wave1.length); // the race was real: some were refused
    // 13 one-seat clients cannot all fit in 10 seats, and a refused one-seat hold means the slot
    // was full at that moment; holds only accumulate in this wave, so it ends exactly full.
    expect(heldSeats).toBe(CAPACITY);
    expect(await ledger(slot.id)).toMatchObject({ live: CAPACITY, seatsBooked: 0, bookings: 0, taken: CAPACITY });

    // Wave 2: every winner books, on the other replica than the one that held; every other
    // multi-seat winner with one guest fewer than held (that seat goes back), every third one
    // paying in full with a gift card (confirmed at once, its seats move into seats_booked),
    // while 20 new clients try to hold the seats being handed back.
    const giftCard = demo.gift_cards[0]!.code; // 10,000.00, enough for every booking here
    const conversions = winners.map((w, i) => {
      const guests = w.seats > 1 && i % 2 === 0 ? w.seats - 1 : w.seats;
      const paid = i % 3 === 0;
      const body = {
        ...bookingBody(demo, experience, slot.id, w.holdId, guests),
        ...(paid ? { gift_card_code: giftCard } : {}),
      };
      return { ...w, guests, paid, request: () => post(via(w.replica + 1), '/api/bookings', w.ip, body) };
    });
    const wave2 = Array.from({ length: 20 }, (_, i) => ({ ip: clientIp(), seats: 1 + (i % 2) }));
    const [booked, lateHeld] = await Promise.all([
      Promise.all(conversions.map((c) => c.request())),
      Promise.all(wave2.map((c, i) => post(via(i), '/api/bookings/hold', c.ip, holdBody(c.seats)))),
    ]);

    for (const reply of [...booked, ...lateHeld]) {
      if (reply.status >= 400) expectErrorShape(reply);
    }
    // A live hold is a promise of its seats: every conversion of one must succeed.
    expect(count(booked)).toEqual({ '201': conversions.length });
    conversions.forEach((c, i) => expect(booked[i]!.body.status).toBe(c.paid ? 'confirmed' : 'held'));
    for (const reply of lateHeld) {
      if (reply.status !== 200) expect(reply.body.error).toBe('insufficient_capacity');
    }
    const bookedGuests = conversions.reduce((sum, c) => sum + c.guests, 0);
    const lateHeldSeats = wave2.reduce((sum, c, i) => sum + (lateHeld[i]!.status === 200 ? c.seats : 0), 0);
    const middle = await ledger(slot.id);
    expectConsistent(middle);
    expect(middle).toMatchObject({
      bookings: conversions.length,
      bookedSeats: bookedGuests,
      taken: bookedGuests + lateHeldSeats,
    });

    // Wave 3: 15 one-seat clients race for whatever is left, so the slot ends full again.
    const wave3 = Array.from({ length: 15 }, () => clientIp());
    const lastHeld = await Promise.all(wave3.map((ip, i) => post(via(i), '/api/bookings/hold', ip, holdBody(1))));
    for (const reply of lastHeld) {
      if (reply.status !== 200) {
        expect(reply.status).toBe(409);
        expectErrorShape(reply);
      }
    }
    expect(lastHeld.some((reply) => reply.status === 409)).toBe(true);
    const lastHeldSeats = lastHeld.filter((reply) => reply.status === 200).length;

    // The claim itself, and the slot is full: nothing oversold, nothing lost.
    const after = await ledger(slot.id);
    expectConsistent(after);
    expect(after).toMatchObject({ bookings: conversions.length, bookedSeats: bookedGuests, taken: CAPACITY });
    expect(after.taken).toBe(bookedGuests + lateHeldSeats + lastHeldSeats);
    const paidGuests = conversions.filter((c) => c.paid).reduce((sum, c) => sum + c.guests, 0);
    expect(after.seatsBooked).toBe(paidGuests);

    // A converted hold cannot be converted again, on either replica.
    const again = await Promise.all(
      winners.map((w, i) => post(via(i), '/api/bookings', w.ip, bookingBody(demo, experience, slot.id, w.holdId, 1))),
    );
    expect(count(again)).toEqual({ '404 hold_not_found': winners.length });
  }, 60_000);

  it('when 12 requests on two replicas convert the same hold at once, then exactly one booking is made and the others are 404 hold_not_found', async () => {
    const experience = demo.experiences[0]!;
    const slot = experience.slots[4]!;
    const CAPACITY = 6;
    await a!.t.deps.db.slot.update({ where: { id: slot.id }, data: { capacity: CAPACITY } });
    const ip = clientIp();
    const hold = await post(a!, '/api/bookings/hold', ip, { slot_id: slot.id, experience_id: experience.id, seats: 4 });
    expect(hold.status).toBe(200);
    const holdId = hold.body.hold_id as string;

    // Same body, from the same client and others, with distinct Idempotency-Keys or none.
    const body = bookingBody(demo, experience, slot.id, holdId, 3);
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const headers: Record<string, string> = i % 3 === 0 ? {} : { 'Idempotency-Key': `race-${holdId}-${i}` };
        return post(via(i), '/api/bookings', i % 2 === 0 ? ip : clientIp(), body, headers);
      }),
    );

    expect(count(replies)).toEqual({ '201': 1, '404 hold_not_found': 11 });
    for (const reply of replies.filter((r) => r.status !== 201)) {
      expect(reply.body).toEqual({ error: 'hold_not_found' });
    }
    const created = replies.find((r) => r.status === 201)!;
    const rows = await a!.t.deps.db.booking.findMany({ where: { holdId }, select: { id: true, guestCount: true } });
    expect(rows).toEqual([{ id: created.body.booking_id, guestCount: 3 }]);
    const l = await ledger(slot.id);
    expectConsistent(l);
    expect(l).toMatchObject({ capacity: CAPACITY, bookings: 1, bookedSeats: 3, taken: 3 });
  }, 30_000);

  it('when a hold expires and another client holds the freed seats, then converting the stale hold is 410 hold_expired and capacity is intact', async () => {
    // A replica whose holds last one second; the other replica keeps the default lifetime.
    short = await startReplica('short', { HOLD_TTL_SECONDS: '1' });
    const experience = demo.experiences[0]!;
    const slot = experience.slots[5]!;
    const CAPACITY = 8;
    await a!.t.deps.db.slot.update({ where: { id: slot.id }, data: { capacity: CAPACITY } });
    const holdBody = { slot_id: slot.id, experience_id: experience.id, seats: CAPACITY };

    const staleIp = clientIp();
    const stale = await post(short, '/api/bookings/hold', staleIp, holdBody);
    expect(stale.status).toBe(200);
    const refused = await post(a!, '/api/bookings/hold', clientIp(), { ...holdBody, seats: 1 });
    expect(refused.status).toBe(409);

    await holdExpired(a!.t, Date.parse(stale.body.expires_at as string));
    expect(await ledger(slot.id)).toMatchObject({ live: 0, taken: 0 });

    const freshIp = clientIp();
    const fresh = await post(b!, '/api/bookings/hold', freshIp, holdBody);
    expect(fresh.status).toBe(200);

    // The stale hold's owner tries to book, on every replica at once.
    const staleBody = bookingBody(demo, experience, slot.id, stale.body.hold_id as string, CAPACITY);
    const replies = await Promise.all(
      [a!, b!, short].map((replica) => post(replica, '/api/bookings', staleIp, staleBody)),
    );
    for (const reply of replies) {
      expect(reply.status).toBe(410);
      expect(reply.body).toEqual({ error: 'hold_expired' });
    }
    const during = await ledger(slot.id);
    expectConsistent(during);
    expect(during).toMatchObject({ seatsBooked: 0, bookings: 0, live: CAPACITY, taken: CAPACITY });

    // The seats are the fresh client's, and it can book them.
    const booked = await post(
      a!,
      '/api/bookings',
      freshIp,
      bookingBody(demo, experience, slot.id, fresh.body.hold_id as string, CAPACITY),
    );
    expect(booked.status).toBe(201);
    const after = await ledger(slot.id);
    expectConsistent(after);
    expect(after).toMatchObject({ bookings: 1, bookedSeats: CAPACITY, taken: CAPACITY });
  }, 30_000);
});
