import { randomUUID } from 'node:crypto';
import { createTestApp, kayak, redisNow, seedTenant, type TestApp } from '@booking/test-kit';
import { lockSlotAndReserveSeats } from '../src/bookings/lock-slot';
import { changeBookedSeats } from '../src/holds/booked-seats';
import { holdIdOn, holdKeys, HoldStore, type SlotSnapshot } from '../src/holds/hold-store';

// The tests' Redis is a single one: the key names of that layout.
const keys = holdKeys(false);

describe('HoldStore: the running seat total and the slot mirror', () => {
  let t: TestApp;

  beforeAll(() => {
    t = createTestApp();
  });
  afterAll(() => t.close());

  /** A slot that no hold has touched yet, with the snapshot PostgreSQL would give of it. */
  async function freshSlot(capacity: number) {
    const demo = await seedTenant(t.deps);
    const { experience, slot } = kayak(demo);
    const snapshot: SlotSnapshot = {
      capacity,
      seatsBooked: 0,
      experienceId: experience.id,
      tenantId: demo.tenant.id,
      startsAt: new Date(Date.now() + 86_400_000),
      minPartySize: 1,
      maxPartySize: 1_000,
    };
    let reads = 0;
    const readSlot = async () => {
      reads += 1;
      return snapshot;
    };
    const hold = (store: HoldStore, seats: number) =>
      store.place(
        { id: holdIdOn(slot.id, randomUUID()), experienceId: experience.id, slotId: slot.id, seats },
        readSlot,
      );
    return { slotId: slot.id, experienceId: experience.id, tenantId: demo.tenant.id, hold, reads: () => reads };
  }

  it('when a hold is read, then it comes with the clock of the Redis that placed it; an unknown hold is null, with the clock all the same', async () => {
    const s = await freshSlot(10);
    const before = await redisNow(t);
    const placed = await s.hold(t.deps.holds, 2);
    const holdId = (await t.deps.redis.zrange(keys.slot(s.slotId).set, '0', '-1'))[0]!.split(':')[0]!;

    const { hold, now } = await t.deps.holds.read(holdId);
    const unknown = await t.deps.holds.read(holdIdOn(s.slotId, randomUUID()));
    const after = await redisNow(t);

    expect(hold).toEqual({
      id: holdId,
      tenantId: expect.any(String),
      experienceId: s.experienceId,
      slotId: s.slotId,
      seats: 2,
      expiresAt: placed.outcome === 'placed' ? placed.expiresAt : NaN,
      bookingId: null,
    });
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(after);
    expect(unknown.hold).toBeNull();
    expect(unknown.now).toBeGreaterThanOrEqual(now);
  });

  it('when a booking reads its hold, then it gets the hold as read finds it and the seats of every other live hold, in one step', async () => {
    const s = await freshSlot(50);
    for (const seats of [3, 5]) expect((await s.hold(t.deps.holds, seats)).outcome).toBe('placed');
    const holds = await t.deps.redis.zrange(keys.slot(s.slotId).set, '0', '-1');
    const idOf = (seats: number) => holds.find((member) => member.endsWith(`:${seats}`))!.split(':')[0]!;
    const [threeId, fiveId] = [idOf(3), idOf(5)];
    const other = await freshSlot(50);
    await other.hold(t.deps.holds, 7);
    const otherId = (await t.deps.redis.zrange(keys.slot(other.slotId).set, '0', '-1'))[0]!.split(':')[0]!;

    const three = await t.deps.holds.readForBooking(s.slotId, threeId);
    expect(three).toEqual({ ...(await t.deps.holds.read(threeId)), now: expect.any(Number), otherSeats: 5 });
    expect(three.hold).toMatchObject({ id: threeId, slotId: s.slotId, seats: 3 });
    expect((await t.deps.holds.readForBooking(s.slotId, fiveId)).otherSeats).toBe(3);
    // Unknown: no hold, and every live hold counts.
    const unknown = await t.deps.holds.readForBooking(s.slotId, holdIdOn(s.slotId, randomUUID()));
    expect([unknown.hold, unknown.otherSeats]).toEqual([null, 8]);
    // Another slot's hold is found, so that the booking can say it is not this slot's.
    const foreign = await t.deps.holds.readForBooking(s.slotId, otherId);
    expect([foreign.hold?.slotId, foreign.otherSeats]).toEqual([other.slotId, 8]);
  });

  it('when holds are placed, shrunk, released and expire, then the total is always the seats of the live holds', async () => {
    const shortLived = new HoldStore(t.deps.redis, 1);
    const s = await freshSlot(100);
    for (const seats of [5, 7, 11]) expect((await s.hold(shortLived, seats)).outcome).toBe('placed');

    const placed = await s.hold(t.deps.holds, 4);
    const kept = await s.hold(t.deps.holds, 6);
    expect([placed.outcome, kept.outcome]).toEqual(['placed', 'placed']);
    expect((await t.deps.holds.liveSeats([s.slotId])).get(s.slotId)).toBe(33);

    const holds = await t.deps.redis.zrange(keys.slot(s.slotId).set, '0', '-1');
    const [convertedId] = holds.find((member) => member.endsWith(':4'))!.split(':');
    const converted = (await t.deps.holds.read(convertedId!)).hold!;
    await t.deps.holds.convert(converted, randomUUID(), 3);
    expect((await t.deps.holds.liveSeats([s.slotId])).get(s.slotId)).toBe(32);
    expect((await t.deps.holds.liveSeats([s.slotId], convertedId)).get(s.slotId)).toBe(29);

    // The three short holds expire; nothing is swept until a script meets them.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await t.deps.redis.zcard(keys.slot(s.slotId).set)).toBe(5);
    expect((await t.deps.holds.liveSeats([s.slotId])).get(s.slotId)).toBe(9);
    expect(await t.deps.redis.zcard(keys.slot(s.slotId).set)).toBe(2);
    expect(await t.deps.redis.get(keys.slot(s.slotId).total)).toBe('9');

    const [keptId] = holds.find((member) => member.endsWith(':6'))!.split(':');
    await t.deps.holds.release(s.slotId, keptId!, 6);
    await t.deps.holds.release(s.slotId, keptId!, 6);
    expect((await t.deps.holds.liveSeats([s.slotId])).get(s.slotId)).toBe(3);
  });

  it('when the total is missing (a set written before totals existed), then it is counted once from the set', async () => {
    const s = await freshSlot(20);
    await s.hold(t.deps.holds, 8);
    await s.hold(t.deps.holds, 4);
    await t.deps.redis.del(keys.slot(s.slotId).total);

    expect((await t.deps.holds.liveSeats([s.slotId])).get(s.slotId)).toBe(12);
    expect((await s.hold(t.deps.holds, 9)).outcome).toBe('full');
    expect((await s.hold(t.deps.holds, 8)).outcome).toBe('placed');
  });

  it('when Redis mirrors the slot, then holds read PostgreSQL once, and a change of booked seats counts at once', async () => {
    const s = await freshSlot(10);
    expect((await s.hold(t.deps.holds, 2)).outcome).toBe('placed');
    expect((await s.hold(t.deps.holds, 2)).outcome).toBe('placed');
    expect(s.reads()).toBe(1);

    await t.deps.holds.seatsBooked(s.slotId, 6);
    expect((await s.hold(t.deps.holds, 1)).outcome).toBe('full');
    await t.deps.holds.seatsBooked(s.slotId, 5);
    expect((await s.hold(t.deps.holds, 1)).outcome).toBe('placed');
    expect(s.reads()).toBe(1);
  });

  it('when a change of booked seats reaches Redis before a snapshot read earlier, then the newer figure wins', async () => {
    const s = await freshSlot(10);
    // The snapshot says 0 booked; a confirmation wrote 7 while it was being read.
    await t.deps.holds.seatsBooked(s.slotId, 7);
    expect((await s.hold(t.deps.holds, 4)).outcome).toBe('full');
    expect((await s.hold(t.deps.holds, 3)).outcome).toBe('placed');
    expect(s.reads()).toBe(1);
  });

  it("when a hold's seats are confirmed, then they leave the hold and enter the booked figure in one step", async () => {
    const s = await freshSlot(10);
    expect((await s.hold(t.deps.holds, 6)).outcome).toBe('placed');
    const [member] = await t.deps.redis.zrange(keys.slot(s.slotId).set, '0', '-1');
    const holdId = member!.split(':')[0]!;

    await t.deps.holds.seatsBooked(s.slotId, 6, { id: holdId, seats: 6 });
    expect((await t.deps.holds.liveSeats([s.slotId])).get(s.slotId)).toBe(0);
    expect(await t.deps.redis.hget(keys.slot(s.slotId).mirror, 'booked')).toBe('6');
    expect((await s.hold(t.deps.holds, 5)).outcome).toBe('full');
    expect((await s.hold(t.deps.holds, 4)).outcome).toBe('placed');
  });

  it('when seats no hold kept are added under the slot lock, then a hold placed before their commit cannot take them', async () => {
    const s = await freshSlot(10);
    await t.deps.db.slot.update({ where: { id: s.slotId }, data: { capacity: 10, seatsBooked: 0 } });
    expect((await s.hold(t.deps.holds, 6)).outcome).toBe('placed');

    // Guests added to a booking (or cash after its hold expired): 4 seats, checked under the slot
    // lock; another replica places a hold for the same 4 before the transaction commits.
    let placedMeanwhile: string | undefined;
    await t.deps.db.$transaction(async (tx) => {
      const input = { tenantId: s.tenantId, slotId: s.slotId, seats: 4, exceptHoldId: '' };
      expect(await lockSlotAndReserveSeats(tx, t.deps.holds, input)).toBe(true);
      placedMeanwhile = (await s.hold(t.deps.holds, 4)).outcome;
      await changeBookedSeats(tx, t.deps.holds, s.slotId, 4);
    });

    expect(placedMeanwhile).toBe('full');
    expect((await t.deps.db.slot.findUniqueOrThrow({ where: { id: s.slotId } })).seatsBooked).toBe(4);
    expect((await t.deps.holds.liveSeats([s.slotId])).get(s.slotId)).toBe(6);
    // And seats that do not fit are refused without counting.
    await t.deps.db.$transaction(async (tx) => {
      const input = { tenantId: s.tenantId, slotId: s.slotId, seats: 1, exceptHoldId: '' };
      expect(await lockSlotAndReserveSeats(tx, t.deps.holds, input)).toBe(false);
    });
    expect(await t.deps.redis.hget(keys.slot(s.slotId).mirror, 'booked')).toBe('4');
  });

  it('when the seats are still kept by the left-out hold (a payment inside its time), then they are checked, not counted twice', async () => {
    const s = await freshSlot(10);
    await t.deps.db.slot.update({ where: { id: s.slotId }, data: { capacity: 10, seatsBooked: 0 } });
    expect((await s.hold(t.deps.holds, 6)).outcome).toBe('placed');
    const [member] = await t.deps.redis.zrange(keys.slot(s.slotId).set, '0', '-1');
    const holdId = member!.split(':')[0]!;

    await t.deps.db.$transaction(async (tx) => {
      const input = { tenantId: s.tenantId, slotId: s.slotId, seats: 6, exceptHoldId: holdId };
      expect(await lockSlotAndReserveSeats(tx, t.deps.holds, input)).toBe(true);
      // The 6 seats are in the hold, not yet in the booked figure: the other 4 are still free.
      expect(await t.deps.redis.hget(keys.slot(s.slotId).mirror, 'booked')).toBe('0');
    });
    expect((await s.hold(t.deps.holds, 4)).outcome).toBe('placed');
  });

  it('when the left-out hold ends within the mirror ttl, then its seats are counted as booked as well, never in neither place', async () => {
    const s = await freshSlot(10);
    await t.deps.db.slot.update({ where: { id: s.slotId }, data: { capacity: 10, seatsBooked: 0 } });
    // A hold of 10 s: it may expire before the paying transaction releases it.
    expect((await s.hold(new HoldStore(t.deps.redis, 10), 6)).outcome).toBe('placed');
    const [member] = await t.deps.redis.zrange(keys.slot(s.slotId).set, '0', '-1');
    const holdId = member!.split(':')[0]!;

    await t.deps.db.$transaction(async (tx) => {
      const input = { tenantId: s.tenantId, slotId: s.slotId, seats: 6, exceptHoldId: holdId };
      expect(await lockSlotAndReserveSeats(tx, t.deps.holds, input)).toBe(true);
      expect(await t.deps.redis.hget(keys.slot(s.slotId).mirror, 'booked')).toBe('6');
    });
  });

  it('when the slot is not open, then nothing is mirrored and the hold is refused', async () => {
    const s = await freshSlot(10);
    const outcome = await t.deps.holds.place(
      { id: holdIdOn(s.slotId, randomUUID()), experienceId: s.experienceId, slotId: s.slotId, seats: 1 },
      async () => null,
    );
    expect(outcome).toEqual({ outcome: 'slot_not_found' });
    expect(await t.deps.redis.exists(keys.slot(s.slotId).mirror)).toBe(0);
  });

  it('when seats are freed while a hold reads the slot, then the hold reads it again rather than mirror the figure from before', async () => {
    const demo = await seedTenant(t.deps);
    const { experience, slot } = kayak(demo);
    await t.deps.db.slot.update({ where: { id: slot.id }, data: { seatsBooked: slot.capacity } });
    const booked: number[] = [];
    const readSlot = async (): Promise<SlotSnapshot> => {
      const row = await t.deps.db.slot.findUniqueOrThrow({ where: { id: slot.id } });
      booked.push(row.seatsBooked);
      // A cancellation of 4 seats commits between this read and the hold's script.
      if (booked.length === 1) {
        await t.deps.db.$transaction((tx) => changeBookedSeats(tx, t.deps.holds, slot.id, -4));
      }
      return {
        capacity: row.capacity,
        seatsBooked: row.seatsBooked,
        experienceId: experience.id,
        tenantId: demo.tenant.id,
        startsAt: new Date(Date.now() + 86_400_000),
        minPartySize: 1,
        maxPartySize: 10,
      };
    };
    const hold = { id: holdIdOn(slot.id, randomUUID()), experienceId: experience.id, slotId: slot.id, seats: 4 };

    expect((await t.deps.holds.place(hold, readSlot)).outcome).toBe('placed');
    expect(booked).toEqual([slot.capacity, slot.capacity - 4]);
    expect(await t.deps.redis.hget(keys.slot(slot.id).mirror, 'booked')).toBe(String(slot.capacity - 4));
  });

  it('when a change that frees seats rolls back, then holds still see the seats it did not free', async () => {
    const demo = await seedTenant(t.deps);
    const { experience, slot } = kayak(demo);
    await t.deps.db.slot.update({ where: { id: slot.id }, data: { seatsBooked: slot.capacity } });
    const hold = () =>
      t.deps.holds.place(
        { id: holdIdOn(slot.id, randomUUID()), experienceId: experience.id, slotId: slot.id, seats: 4 },
        async () => ({
          capacity: slot.capacity,
          seatsBooked: slot.capacity,
          experienceId: experience.id,
          tenantId: demo.tenant.id,
          startsAt: new Date(Date.now() + 86_400_000),
          minPartySize: 1,
          maxPartySize: 10,
        }),
      );
    expect((await hold()).outcome).toBe('full');

    // A cancellation (or refund, party shrink, reschedule away) that fails after freeing the seats.
    const failed = t.deps.db.$transaction(async (tx) => {
      await changeBookedSeats(tx, t.deps.holds, slot.id, -slot.capacity);
      throw new Error('a later statement of the cancellation failed');
    });
    await expect(failed).rejects.toThrow('a later statement');
    expect((await hold()).outcome).toBe('full');
  });
});
