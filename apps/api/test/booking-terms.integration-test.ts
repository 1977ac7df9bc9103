import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { bookingBody, clientIp, createTestApp, kayak, placeHold, seedTenant, type TestApp } from '@booking/test-kit';

// A plain booking prices itself from terms the process keeps (booking-terms) and reads nothing
// before its one statement; the statement checks those terms are still current. A change made
// elsewhere (another replica, an operator, here the database directly) must never book at an
// old price or refuse by an old rule.
describe('a booking priced from kept terms', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  /** Books `guests` on the kayak's slot `index` (a fresh hold of `seats`), as `email`, with `extra` fields in the body. */
  async function book(
    index: number,
    guests: number,
    options: { seats?: number; email?: string; addons?: object[]; extra?: object } = {},
  ) {
    const { experience } = kayak(demo);
    const slot = experience.slots[index]!;
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, options.seats ?? guests);
    const body = bookingBody(demo, experience, slot.id, holdId, guests);
    return request(t.app)
      .post('/api/bookings')
      .set('X-Forwarded-For', ip)
      .send({
        ...body,
        customer: { ...body.customer, ...(options.email ? { email: options.email } : {}) },
        ...(options.addons ? { addons: options.addons } : {}),
        ...options.extra,
      });
  }

  /** The slot's terms are kept by this process (a booking on it has read them). */
  function kept(index: number, addonIds: string[] = []) {
    const { experience } = kayak(demo);
    return t.deps.terms.get(experience.id, experience.slots[index]!.id, addonIds);
  }

  /** Counts the named statements the API's pool runs while `run` goes. */
  async function statementsDuring(run: () => Promise<unknown>): Promise<string[]> {
    const names: string[] = [];
    const query = t.deps.pool.query.bind(t.deps.pool);
    const spy = jest.spyOn(t.deps.pool, 'query').mockImplementation(((config: unknown, ...rest: unknown[]) => {
      const name = (config as { name?: string })?.name;
      if (name) names.push(name);
      return (query as (...args: unknown[]) => unknown)(config, ...rest);
    }) as typeof t.deps.pool.query);
    try {
      await run();
    } finally {
      spy.mockRestore();
    }
    return names;
  }

  it('when terms are kept, then a new customer is booked in one statement and a returning one in two', async () => {
    expect((await book(0, 1)).status).toBe(201);
    expect(kept(0)).toBeDefined();
    const email = `kept-${Date.now()}@example.com`;
    const first = await statementsDuring(async () => expect((await book(0, 1, { email })).status).toBe(201));
    expect(first).toEqual(['insert-booking-new']);
    // The statement finds the customer it was not told of, and is sent again for it.
    const again = await statementsDuring(async () => expect((await book(0, 1, { email })).status).toBe(201));
    expect(again).toEqual(['insert-booking-new', 'insert-booking-known']);
    const customers = await t.deps.db.customer.findMany({ where: { tenantId: demo.tenant.id, email } });
    expect(customers).toHaveLength(1);
    expect(await t.deps.db.booking.count({ where: { customerId: customers[0]!.id } })).toBe(2);
  });

  it('when the price changes after the terms were kept, then the next booking is priced at the new price', async () => {
    const { experience } = kayak(demo);
    expect((await book(1, 2)).status).toBe(201);
    expect(kept(1)).toBeDefined();
    await t.deps.db.experience.update({ where: { id: experience.id }, data: { basePriceCents: 4321 } });
    await t.deps.db.slot.update({ where: { id: experience.slots[1]!.id }, data: { priceCents: null } });

    const res = await book(1, 2);

    expect(res.status).toBe(201);
    expect(res.body.total_cents).toBe(4321 * 2);
    const row = await t.deps.db.booking.findUniqueOrThrow({ where: { id: res.body.booking_id } });
    expect(row).toMatchObject({ unitPriceCents: 4321, totalCents: 4321 * 2 });
    expect(kept(1)).toMatchObject({ basePriceCents: 4321, slotPriceCents: null });
  });

  it('when the largest party is raised after the terms were kept, then a party past the old bound is booked at once', async () => {
    const { experience } = kayak(demo);
    expect((await book(3, 1)).status).toBe(201);
    expect(kept(3)).toMatchObject({ maxPartySize: 12 });
    await t.deps.db.experience.update({ where: { id: experience.id }, data: { maxPartySize: 14 } });
    // Holds check party sizes against their own copy of the slot (hold-store), kept 30 s: drop it
    // as if those 30 s had passed, while the booking's kept terms still say 12.
    await t.deps.holds.forgetSlot(experience.slots[3]!.id);

    expect((await book(3, 13)).status).toBe(201);
  });

  /** Keeps slot `index`'s terms with a largest party of 12, then lowers it to 4 in PostgreSQL only. */
  async function keptWithTwelveThenFour(index: number) {
    const { experience } = kayak(demo);
    await t.deps.db.experience.update({ where: { id: experience.id }, data: { maxPartySize: 12 } });
    expect((await book(index, 1)).status).toBe(201);
    expect(kept(index)).toMatchObject({ maxPartySize: 12 });
    await t.deps.db.experience.update({ where: { id: experience.id }, data: { maxPartySize: 4 } });
  }

  it('when the largest party is lowered after the terms were kept, then a party past the new bound is refused with it', async () => {
    const { experience } = kayak(demo);
    try {
      await keptWithTwelveThenFour(4);
      const res = await book(4, 6);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_guest_count');
      expect(res.body.detail).toEqual({ min_party_size: 1, max_party_size: 4, seats_held: 6 });

      // A request also wrong in another way is refused as a fresh read refuses it: for its
      // party first, never for what the kept terms let through to the next check.
      await keptWithTwelveThenFour(5);
      const withPasses = await book(5, 6, { extra: { guest_passes: 1 } });
      expect(withPasses.status).toBe(400);
      expect(withPasses.body.error).toBe('invalid_guest_count');
      expect(withPasses.body.detail).toMatchObject({ max_party_size: 4 });
    } finally {
      await t.deps.db.experience.update({ where: { id: experience.id }, data: { maxPartySize: 12 } });
    }
  });

  it('when the price changes before every statement, then the booking is refused 503 with nothing written, and its retry books at the price of the day', async () => {
    const { experience } = kayak(demo);
    const slot = experience.slots[2]!;
    await t.deps.db.slot.update({ where: { id: slot.id }, data: { priceCents: null } });
    expect((await book(2, 1)).status).toBe(201);
    const ip = clientIp();
    const holdId = await placeHold(t, ip, experience, slot.id, 1);
    const body = bookingBody(demo, experience, slot.id, holdId, 1);
    const key = `reprice-${holdId}`;
    const send = () =>
      request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).set('Idempotency-Key', key).send(body);
    const hold = (await t.deps.holds.read(holdId)).hold;
    const counts = async () => ({
      bookings: await t.deps.db.booking.count({ where: { tenantId: demo.tenant.id } }),
      customers: await t.deps.db.customer.count({ where: { tenantId: demo.tenant.id } }),
      events: await t.deps.db.event.count({ where: { tenantId: demo.tenant.id } }),
    });
    const before = await counts();
    // A bulk repricing that commits between every read and the statement after it.
    const query = t.deps.pool.query.bind(t.deps.pool);
    let repriced = 0;
    const spy = jest.spyOn(t.deps.pool, 'query').mockImplementation((async (config: unknown, ...rest: unknown[]) => {
      if ((config as { name?: string })?.name?.startsWith('insert-booking')) {
        repriced += 1;
        await t.deps.db.experience.update({
          where: { id: experience.id },
          data: { basePriceCents: { increment: 100 } },
        });
      }
      return (query as (...args: unknown[]) => unknown)(config, ...rest);
    }) as typeof t.deps.pool.query);
    let refused;
    try {
      refused = await send();
    } finally {
      spy.mockRestore();
    }

    expect(refused.status).toBe(503);
    expect(refused.body.error).toBe('service_unavailable');
    expect(repriced).toBe(3);
    expect(await counts()).toEqual(before);
    expect((await t.deps.holds.read(holdId)).hold).toEqual(hold);
    // The retry with the same key is not answered the 503 again: it books, at today's price.
    const { basePriceCents } = await t.deps.db.experience.findUniqueOrThrow({ where: { id: experience.id } });
    const booked = await send();
    expect(booked.status).toBe(201);
    expect(booked.headers['idempotent-replayed']).toBeUndefined();
    expect(booked.body.total_cents).toBe(basePriceCents);
    const row = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.body.booking_id } });
    expect(row.unitPriceCents).toBe(basePriceCents);
  });

  it('when an addon is retired or repriced after the terms were kept, then the booking follows the addon as it is now', async () => {
    const { experience } = kayak(demo);
    const [dryBag, photos] = experience.addons;
    const addons = [
      { addon_id: dryBag!.id, qty: 1 },
      { addon_id: photos!.id, qty: 1 },
    ];
    expect((await book(5, 1, { addons })).status).toBe(201);
    expect(kept(5, [dryBag!.id, photos!.id])).toBeDefined();
    await t.deps.db.addon.update({ where: { id: dryBag!.id }, data: { priceCents: 999 } });
    await t.deps.db.addon.update({ where: { id: photos!.id }, data: { active: false } });

    const refused = await book(5, 1, { addons });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('addon_invalid');
    expect(refused.body.detail).toMatchObject({ addon_ids: [photos!.id] });

    const repriced = await book(5, 1, { addons: addons.slice(0, 1) });
    expect(repriced.status).toBe(201);
    const row = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: repriced.body.booking_id },
      include: { addons: true },
    });
    expect(row.addons).toEqual([expect.objectContaining({ addonId: dryBag!.id, unitPriceCents: 999 })]);
    expect(row.addonsTotalCents).toBe(999);
  });
});
