import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { bookingBody, clientIp, createTestApp, kayak, placeHold, seedTenant, type TestApp } from '@booking/test-kit';
import { bookInTransaction } from '../src/bookings/book-in-transaction';
import type { BookingRequest } from '../src/bookings/booking-schemas';
import { insertBooking } from '../src/bookings/insert-booking';
import { newBooking } from '../src/bookings/new-booking';
import { prepareBooking } from '../src/bookings/prepare-booking';

type Path = 'statement' | 'transaction';

// A plain booking is written in one statement (insert-booking); one the statement cannot decide,
// and every booking with a gift card or a membership, in a transaction (book-in-transaction).
// Both must leave the same rows and events.
describe('a plain booking written in one statement or in a transaction', () => {
  let t: TestApp;
  let demo: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    demo = await seedTenant(t.deps);
    await t.deps.db.slot.update({ where: { id: kayak(demo).peakSlot.id }, data: { capacity: 100 } });
  });
  afterAll(() => t.close());

  /** A request converting a fresh hold of 3 seats on the peak slot, with notes and (unless told) two addons. */
  async function requestFor(customer: BookingRequest['customer'], addons = true): Promise<BookingRequest> {
    const { experience, peakSlot } = kayak(demo);
    const holdId = await placeHold(t, clientIp(), experience, peakSlot.id, 3);
    return {
      ...bookingBody(demo, experience, peakSlot.id, holdId, 2),
      customer,
      notes: 'window seats',
      ...(addons && { addons: experience.addons.map((addon, i) => ({ addon_id: addon.id, qty: i + 1 })) }),
    };
  }

  /** Writes the request by `path`; returns what it wrote, with its ids, emails and times named. */
  async function write(path: Path, body: BookingRequest) {
    const eventsBefore = new Set((await t.deps.db.event.findMany({ select: { id: true } })).map((e) => e.id));
    const prepared = await prepareBooking(t.deps, body);
    const booking = newBooking(prepared, body, 'idempotency-ref');
    const customerId =
      path === 'statement'
        ? await insertBooking(t.deps.pool, prepared, booking, body).then((outcome) =>
            outcome.kind === 'booked' ? outcome.customerId : outcome.kind,
          )
        : (await bookInTransaction(t.deps, prepared, booking, body)).customerId;
    expect(customerId).toMatch(/^[0-9a-f-]{36}$/);

    const { createdAt, updatedAt, holdExpiresAt, ...row } = await t.deps.db.booking.findUniqueOrThrow({
      where: { id: booking.id },
      include: { addons: { orderBy: { qty: 'asc' } } },
    });
    expect(holdExpiresAt).toEqual(new Date(prepared.hold.expiresAt));
    expect(updatedAt.getTime()).toBeGreaterThanOrEqual(createdAt.getTime());
    const {
      createdAt: _c,
      updatedAt: _u,
      ...customer
    } = await t.deps.db.customer.findUniqueOrThrow({
      where: { id: customerId! },
    });
    const events = (await t.deps.db.event.findMany({ where: { entityId: { in: [booking.id, customerId!] } } }))
      .filter((event) => !eventsBefore.has(event.id))
      .sort((x, y) => x.name.localeCompare(y.name))
      .map(({ createdAt: _e, relayedAt, ...event }) => {
        expect(relayedAt).toBeNull();
        expect(event.data).toMatchObject({ event_id: event.id });
        return event;
      });
    let text = JSON.stringify({ row, customer, events });
    const names: [string, string][] = [
      [booking.id, '<booking>'],
      [customerId!, '<customer>'],
      [body.hold_id, '<hold>'],
      [body.customer.email, '<email>'],
      ...events.map((event, i): [string, string] => [event.id, `<event ${i}>`]),
    ];
    for (const [value, name] of names) text = text.split(value).join(name);
    return JSON.parse(text) as unknown;
  }

  it('when the customer is new, then both write the same booking, addons, customer and events', async () => {
    const customer = (path: Path) => ({ email: `new-${path}@example.com`, first_name: 'Ada', phone: '+441234' });
    const statement = await write('statement', await requestFor(customer('statement')));
    const transaction = await write('transaction', await requestFor(customer('transaction')));
    expect(statement).toEqual(transaction);
    expect(statement).toMatchObject({
      row: { status: 'held', guestCount: 2, notes: 'window seats', idempotencyRef: 'idempotency-ref' },
      customer: { email: '<email>', firstName: 'Ada', lastName: null, phone: '+441234' },
      events: [
        { name: 'booking.created', data: { booking_id: '<booking>', customer_email: '<email>', guest_count: 2 } },
        { name: 'customer.created', data: { customer_id: '<customer>', source: 'booking' } },
      ],
    });
    expect((statement as { row: { addons: unknown[] } }).row.addons).toHaveLength(2);
  });

  it('when a known customer books with a new name and phone, then both update it and record the same customer.updated', async () => {
    const written: Record<Path, unknown> = { statement: null, transaction: null };
    for (const path of ['statement', 'transaction'] as const) {
      const email = `known-${path}@example.com`;
      await write(path, await requestFor({ email, first_name: 'Ada', last_name: 'Byron' }));
      written[path] = await write(path, await requestFor({ email, first_name: 'Augusta', phone: '+44999' }));
    }
    expect(written.statement).toEqual(written.transaction);
    expect(written.statement).toMatchObject({
      customer: { firstName: 'Augusta', lastName: 'Byron', phone: '+44999' },
      events: [
        { name: 'booking.created' },
        { name: 'customer.updated', data: { customer_id: '<customer>', changed_fields: ['first_name', 'phone'] } },
      ],
    });
  });

  it('when a known customer books with the same contact, then both leave it as it was and record only booking.created', async () => {
    const written: Record<Path, unknown> = { statement: null, transaction: null };
    for (const path of ['statement', 'transaction'] as const) {
      const customer = { email: `same-${path}@example.com`, first_name: 'Ada', last_name: 'Byron' };
      await write(path, await requestFor(customer));
      written[path] = await write(path, await requestFor(customer));
    }
    expect(written.statement).toEqual(written.transaction);
    expect((written.statement as { events: { name: string }[] }).events.map((e) => e.name)).toEqual([
      'booking.created',
    ]);
  });

  // The statement has a shape per kind of customer and addons (insert-booking-statement); the
  // tests above book addons, these none.
  it('when a new customer books without addons, and books again with a changed contact, then both paths write the same', async () => {
    const written: Record<Path, unknown[]> = { statement: [], transaction: [] };
    for (const path of ['statement', 'transaction'] as const) {
      const email = `plain-${path}@example.com`;
      written[path].push(await write(path, await requestFor({ email, first_name: 'Ada' }, false)));
      written[path].push(await write(path, await requestFor({ email, first_name: 'Ada', last_name: 'King' }, false)));
    }
    expect(written.statement).toEqual(written.transaction);
    expect(written.statement).toMatchObject([
      {
        row: { addons: [], addonsTotalCents: 0 },
        events: [{ name: 'booking.created' }, { name: 'customer.created' }],
      },
      {
        row: { addons: [] },
        customer: { firstName: 'Ada', lastName: 'King' },
        events: [{ name: 'booking.created' }, { name: 'customer.updated', data: { changed_fields: ['last_name'] } }],
      },
    ]);
  });

  it('when a known customer books again without addons and the same contact, then both paths write the same, and only booking.created', async () => {
    const written: Record<Path, unknown> = { statement: null, transaction: null };
    for (const path of ['statement', 'transaction'] as const) {
      const customer = { email: `plain-same-${path}@example.com`, first_name: 'Ada', last_name: 'King' };
      await write(path, await requestFor(customer, false));
      written[path] = await write(path, await requestFor(customer, false));
    }
    expect(written.statement).toEqual(written.transaction);
    expect(written.statement).toMatchObject({ row: { addons: [] }, events: [{ name: 'booking.created' }] });
  });

  it('when the statement is sent again for a hold that has its booking, then it is hold_not_found and writes nothing, for a new customer or a known one whose contact changed', async () => {
    const body = await requestFor({ email: 'twice@example.com', first_name: 'Ada' }, false);
    const first = await prepareBooking(t.deps, body);
    await expect(insertBooking(t.deps.pool, first, newBooking(first, body, 'ref-1'), body)).resolves.toMatchObject({
      kind: 'booked',
    });
    const counts = async () => ({
      customers: await t.deps.db.customer.count({ where: { tenantId: demo.tenant.id } }),
      bookings: await t.deps.db.booking.count({ where: { tenantId: demo.tenant.id } }),
      events: await t.deps.db.event.count({ where: { tenantId: demo.tenant.id } }),
    });
    const before = await counts();

    for (const customer of [
      { email: 'twice-other@example.com', first_name: 'Bo' },
      { email: 'twice@example.com', first_name: 'Augusta', phone: '+44777' },
    ]) {
      const again = { ...body, customer };
      const prepared = await prepareBooking(t.deps, again, true);
      await expect(
        insertBooking(t.deps.pool, prepared, newBooking(prepared, again, 'ref-2'), again),
      ).rejects.toMatchObject({ code: 'hold_not_found' });
    }

    expect(await counts()).toEqual(before);
    // The known customer's update went with the rest.
    expect(
      await t.deps.db.customer.findFirst({ where: { tenantId: demo.tenant.id, email: 'twice@example.com' } }),
    ).toMatchObject({ firstName: 'Ada', phone: null });
  });

  it('when 12 first bookings by one new email race, then all are made, for one customer with one customer.created', async () => {
    const { experience } = kayak(demo);
    const slot = experience.slots[3]!;
    await t.deps.db.slot.update({ where: { id: slot.id }, data: { capacity: 100 } });
    const email = `race-${slot.id.slice(0, 8)}@example.com`;
    const bodies = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const ip = clientIp();
        const holdId = await placeHold(t, ip, experience, slot.id, 1);
        const names = ['Ada', 'Augusta'];
        return {
          ip,
          body: { ...bookingBody(demo, experience, slot.id, holdId, 1), customer: { email, first_name: names[i % 2] } },
        };
      }),
    );
    const replies = await Promise.all(
      bodies.map(({ ip, body }) => request(t.app).post('/api/bookings').set('X-Forwarded-For', ip).send(body)),
    );
    expect(replies.map((r) => r.status)).toEqual(bodies.map(() => 201));
    const customers = await t.deps.db.customer.findMany({ where: { tenantId: demo.tenant.id, email } });
    expect(customers).toHaveLength(1);
    const bookings = await t.deps.db.booking.findMany({ where: { slotId: slot.id }, select: { customerId: true } });
    expect(bookings.filter((b) => b.customerId === customers[0]!.id)).toHaveLength(12);
    const events = await t.deps.db.event.findMany({
      where: { entityId: customers[0]!.id },
      orderBy: { createdAt: 'asc' },
    });
    expect(events.filter((e) => e.name === 'customer.created')).toHaveLength(1);
    // Each change of name between bookings is one customer.updated naming first_name.
    for (const event of events.filter((e) => e.name === 'customer.updated')) {
      expect(event.data).toMatchObject({ changed_fields: ['first_name'] });
    }
  });
});
