import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS } from '@booking/events';
import {
  bearer,
  bookingBody,
  clientIp,
  confirmedBooking,
  createTestApp,
  placeHold,
  seedMembership,
  seedMembershipPlan,
  seedTenant,
  type TestApp,
} from '@booking/test-kit';

interface CustomerInput {
  email: string;
  first_name: string;
  last_name?: string;
  phone?: string;
}

describe('customers', () => {
  let t: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
  });
  afterAll(() => t.close());

  const uniqueEmail = (label: string) => `${label}-${randomUUID().slice(0, 8)}@example.com`;

  /** A one-guest booking for `customer`, confirmed by the seed's big gift card; returns it and its customer. */
  async function book(tenant: DemoTenant, customer: CustomerInput, options: { slotIndex?: number } = {}) {
    const booked = await confirmedBooking(t, tenant, { ...options, guests: 1, body: { customer } });
    const booking = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booked.booking_id } });
    return { bookingId: booking.id, customerId: booking.customerId };
  }

  /** A customer written straight to the database, as an import would. */
  function createCustomer(tenant: DemoTenant, data: { email?: string; createdAt?: Date } = {}) {
    return t.deps.db.customer.create({
      data: {
        tenantId: tenant.tenant.id,
        email: data.email ?? uniqueEmail('direct'),
        firstName: 'Direct',
        createdAt: data.createdAt,
      },
    });
  }

  const customerEvents = (customerId: string, name?: string) =>
    t.deps.db.event.findMany({ where: { entityId: customerId, ...(name && { name }) }, orderBy: { createdAt: 'asc' } });

  const list = (tenant: DemoTenant, query: Record<string, string> = {}, key = tenant.api_keys.staff) =>
    request(t.app).get('/api/v1/customers').query(query).set('Authorization', bearer(key));
  const getOne = (id: string, key = demo.api_keys.staff) =>
    request(t.app).get(`/api/v1/customers/${id}`).set('Authorization', bearer(key));
  const patch = (id: string, body: unknown, key = demo.api_keys.manager) =>
    request(t.app)
      .patch(`/api/customers/${id}`)
      .set('Authorization', bearer(key))
      .send(body as object);
  const anonymise = (id: string, key = demo.api_keys.manager) =>
    request(t.app).post(`/api/customers/${id}/anonymise`).set('Authorization', bearer(key));

  describe('GET /api/v1/customers', () => {
    it('when a tenant has more customers than a page, then pages in (created_at, id) order cover each exactly once', async () => {
      const tenant = await seedTenant(t.deps);
      // Two pairs share a created_at: only the id can order them, and the cursor must not skip one.
      const base = Date.now() - 60_000;
      const created = [];
      for (const offset of [0, 0, 1000, 2000, 2000]) {
        created.push(await createCustomer(tenant, { createdAt: new Date(base + offset) }));
      }
      const expected = [...created]
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id))
        .map((c) => c.id);

      const seen: string[] = [];
      const cursors: (string | null)[] = [];
      let startingAfter: string | undefined;
      for (let page = 0; page < 5; page++) {
        const res = await list(tenant, { limit: '2', ...(startingAfter && { starting_after: startingAfter }) });
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.data.map((c: { id: string }) => c.id));
        cursors.push(res.body.next_starting_after);
        if (res.body.next_starting_after === null) break;
        startingAfter = res.body.next_starting_after;
      }

      expect(seen).toEqual(expected);
      expect(cursors).toEqual([expected[1], expected[3], null]);
    });

    it('when no limit is given, then a page holds 20 customers', async () => {
      const tenant = await seedTenant(t.deps);
      await t.deps.db.customer.createMany({
        data: Array.from({ length: 21 }, () => ({
          tenantId: tenant.tenant.id,
          email: uniqueEmail('bulk'),
          firstName: 'Bulk',
        })),
      });

      const first = await list(tenant);
      const second = await list(tenant, { starting_after: first.body.next_starting_after });

      expect(first.status).toBe(200);
      expect(first.body.data).toHaveLength(20);
      expect(first.body.next_starting_after).toBe(first.body.data[19].id);
      expect(second.body.data).toHaveLength(1);
      expect(second.body.next_starting_after).toBeNull();
    });

    it('when customers have booked, then each record is the full record with its booking count', async () => {
      const tenant = await seedTenant(t.deps);
      const email = uniqueEmail('counted');
      const first = await book(tenant, { email, first_name: 'Grace', last_name: 'Hopper', phone: '+1 555 0101' });
      await book(tenant, { email, first_name: 'Grace', last_name: 'Hopper', phone: '+1 555 0101' });
      const row = await t.deps.db.customer.findUniqueOrThrow({ where: { id: first.customerId } });

      const res = await list(tenant);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: [
          {
            id: first.customerId,
            email,
            first_name: 'Grace',
            last_name: 'Hopper',
            phone: '+1 555 0101',
            tags: [],
            marketing_opt_in: false,
            anonymised: false,
            anonymised_at: null,
            created_at: row.createdAt.toISOString(),
            updated_at: row.updatedAt.toISOString(),
            booking_count: 2,
          },
        ],
        next_starting_after: null,
      });
    });

    it('when filtered by email, then only that customer is listed, whatever the case of the address', async () => {
      const email = uniqueEmail('filter');
      const wanted = await createCustomer(demo, { email });
      await createCustomer(demo);

      const exact = await list(demo, { email });
      const upper = await list(demo, { email: email.toUpperCase() });
      const unknown = await list(demo, { email: uniqueEmail('nobody') });

      expect(exact.status).toBe(200);
      expect(exact.body.data.map((c: { id: string }) => c.id)).toEqual([wanted.id]);
      expect(upper.body.data.map((c: { id: string }) => c.id)).toEqual([wanted.id]);
      expect(unknown.body).toEqual({ data: [], next_starting_after: null });
    });

    it("when another tenant lists, then it never sees this tenant's customers, nor pages from them", async () => {
      const mine = await createCustomer(demo);

      const all = await list(other, { limit: '100' });
      const byEmail = await list(other, { email: mine.email });
      const fromMine = await list(other, { starting_after: mine.id });

      expect(all.status).toBe(200);
      expect(all.body.data.map((c: { id: string }) => c.id)).not.toContain(mine.id);
      expect(byEmail.body.data).toEqual([]);
      expect(fromMine.status).toBe(404);
      expect(fromMine.body.error).toBe('customer_not_found');
    });

    it('when a customer is anonymised, then it is listed with its personal fields null and the old address finds nothing', async () => {
      const tenant = await seedTenant(t.deps);
      const email = uniqueEmail('erased');
      const customer = await createCustomer(tenant, { email });
      expect((await anonymise(customer.id, tenant.api_keys.manager)).status).toBe(200);

      const res = await list(tenant);
      const byOldEmail = await list(tenant, { email });
      const byPlaceholder = await list(tenant, { email: `anonymised+${customer.id}@invalid` });

      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0]).toMatchObject({
        id: customer.id,
        email: null,
        first_name: null,
        last_name: null,
        phone: null,
        tags: [],
        marketing_opt_in: false,
        anonymised: true,
      });
      expect(Date.parse(res.body.data[0].anonymised_at)).not.toBeNaN();
      expect(byOldEmail.body.data).toEqual([]);
      expect(byPlaceholder.body.data).toEqual([]);
    });

    it.each([
      [{ limit: '0' }],
      [{ limit: '101' }],
      [{ limit: 'ten' }],
      [{ starting_after: 'not-a-uuid' }],
      [{ email: '' }],
      [{ sort: 'email' }],
    ])('when the query is %j, then it is 400 invalid_query', async (query) => {
      const res = await list(demo, query);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_query');
    });

    it('when starting_after names no customer, then it is 404 customer_not_found', async () => {
      const res = await list(demo, { starting_after: randomUUID() });

      expect(res.status).toBe(404);
      expect(res.body.error).toBe('customer_not_found');
    });
  });

  describe('GET /api/v1/customers/{id}', () => {
    it('when a customer has bookings, then the record lists them, newest first', async () => {
      const email = uniqueEmail('history');
      const first = await book(demo, { email, first_name: 'Ada' }, { slotIndex: 1 });
      const second = await book(demo, { email, first_name: 'Ada' }, { slotIndex: 3 });
      const experience = demo.experiences[0]!;

      const res = await getOne(first.customerId);

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: first.customerId, email, first_name: 'Ada', booking_count: 2 });
      const total = (await t.deps.db.booking.findUniqueOrThrow({ where: { id: second.bookingId } })).totalCents;
      expect(res.body.bookings).toEqual([
        {
          booking_id: second.bookingId,
          status: 'confirmed',
          slot_starts_at: experience.slots[3]!.starts_at,
          experience_id: experience.id,
          total_cents: total,
          currency: 'USD',
        },
        expect.objectContaining({
          booking_id: first.bookingId,
          status: 'confirmed',
          slot_starts_at: experience.slots[1]!.starts_at,
        }),
      ]);
    });

    it('when a customer has more than 50 bookings, then the 50 most recent are listed and all are counted', async () => {
      const tenant = await seedTenant(t.deps);
      const customer = await createCustomer(tenant);
      const experience = tenant.experiences[0]!;
      const base = Date.now() - 3_600_000;
      const bookings = Array.from({ length: 52 }, (_, i) => ({
        id: randomUUID(),
        tenantId: tenant.tenant.id,
        experienceId: experience.id,
        venueId: tenant.venue_id,
        slotId: experience.slots[0]!.id,
        customerId: customer.id,
        holdId: randomUUID(),
        holdExpiresAt: new Date(base),
        status: 'cancelled' as const,
        guestCount: 1,
        currency: 'USD',
        unitPriceCents: 4500,
        addonsTotalCents: 0,
        totalCents: 4500,
        createdAt: new Date(base + i * 1000),
      }));
      await t.deps.db.booking.createMany({ data: bookings });

      const res = await getOne(customer.id, tenant.api_keys.staff);

      expect(res.status).toBe(200);
      expect(res.body.booking_count).toBe(52);
      expect(res.body.bookings.map((b: { booking_id: string }) => b.booking_id)).toEqual(
        bookings
          .slice(2)
          .reverse()
          .map((b) => b.id),
      );
    });

    it("when the customer is another tenant's, unknown or not a uuid, then it is 404 customer_not_found", async () => {
      const theirs = await createCustomer(other);

      for (const id of [theirs.id, randomUUID(), 'not-a-uuid']) {
        const res = await getOne(id);
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('customer_not_found');
      }
    });
  });

  describe('PATCH /api/customers/{id}', () => {
    it('when a manager changes every field, then the record has them and one customer.updated lists each', async () => {
      const customer = await createCustomer(demo);
      const newEmail = uniqueEmail('renamed');

      const res = await patch(customer.id, {
        email: newEmail.toUpperCase(),
        first_name: 'Katherine',
        last_name: 'Johnson',
        phone: '+1 555 0199',
        tags: ['vip', 'school-group'],
        marketing_opt_in: true,
      });

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: customer.id,
        email: newEmail,
        first_name: 'Katherine',
        last_name: 'Johnson',
        phone: '+1 555 0199',
        tags: ['vip', 'school-group'],
        marketing_opt_in: true,
        anonymised: false,
        booking_count: 0,
      });
      expect(Date.parse(res.body.updated_at)).toBeGreaterThan(customer.updatedAt.getTime());
      const stored = await t.deps.db.customer.findUniqueOrThrow({ where: { id: customer.id } });
      expect(stored).toMatchObject({ email: newEmail, firstName: 'Katherine', marketingOptIn: true });
      const events = await customerEvents(customer.id);
      expect(events).toHaveLength(1);
      expect(events[0]!.name).toBe('customer.updated');
      expect(events[0]!.tenantId).toBe(demo.tenant.id);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['customer.updated'],
        entity_type: 'customer',
        entity_id: customer.id,
        customer_id: customer.id,
        changed_fields: ['email', 'first_name', 'last_name', 'phone', 'tags', 'marketing_opt_in'],
      });
    });

    it.each([
      [{ email: uniqueEmail('single') }, ['email']],
      [{ first_name: 'Mary' }, ['first_name']],
      [{ last_name: 'Jackson' }, ['last_name']],
      [{ last_name: null }, ['last_name']],
      [{ phone: '+44 20 7946 0000' }, ['phone']],
      [{ phone: null }, ['phone']],
      [{ tags: ['member'] }, ['tags']],
      [{ tags: [] }, ['tags']],
      [{ marketing_opt_in: false }, ['marketing_opt_in']],
    ])('when a manager sends %j, then changed_fields is exactly %j', async (body, changed) => {
      const customer = await t.deps.db.customer.create({
        data: {
          tenantId: demo.tenant.id,
          email: uniqueEmail('field'),
          firstName: 'Dorothy',
          lastName: 'Vaughan',
          phone: '+1 555 0000',
          tags: ['regular'],
          marketingOptIn: true,
        },
      });
      const res = await patch(customer.id, body);

      expect(res.status).toBe(200);
      const events = await customerEvents(customer.id, 'customer.updated');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ customer_id: customer.id, changed_fields: changed });
      const [field, value] = Object.entries(body)[0]!;
      expect(res.body[field]).toEqual(value);
    });

    it('when a PATCH repeats the current values, then nothing is written and no event is recorded', async () => {
      const email = uniqueEmail('same');
      const customer = await t.deps.db.customer.create({
        data: {
          tenantId: demo.tenant.id,
          email,
          firstName: 'Annie',
          lastName: null,
          phone: '+1 555 0123',
          tags: ['a', 'b'],
          marketingOptIn: true,
        },
      });

      const res = await patch(customer.id, {
        email: email.toUpperCase(),
        first_name: 'Annie',
        last_name: null,
        phone: '+1 555 0123',
        tags: ['b', 'a'],
        marketing_opt_in: true,
      });

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ email, tags: ['a', 'b'], updated_at: customer.updatedAt.toISOString() });
      expect(await customerEvents(customer.id)).toEqual([]);
      expect(await t.deps.db.customer.findUniqueOrThrow({ where: { id: customer.id } })).toEqual(customer);
    });

    it("when the new email is another customer's of the tenant, then it is 409 customer_email_taken and nothing changes", async () => {
      const taken = await createCustomer(demo);
      const customer = await createCustomer(demo);
      const elsewhere = await createCustomer(other);

      const conflict = await patch(customer.id, { email: taken.email.toUpperCase(), first_name: 'New' });
      // The same address in another tenant is no conflict.
      const allowed = await patch(customer.id, { email: elsewhere.email });

      expect(conflict.status).toBe(409);
      expect(conflict.body.error).toBe('customer_email_taken');
      expect(allowed.status).toBe(200);
      expect(allowed.body.email).toBe(elsewhere.email);
      const events = await customerEvents(customer.id);
      expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ changed_fields: ['email'] })]);
    });

    it('when two managers take the same free address at once, then one gets it and the other 409', async () => {
      const [a, b] = [await createCustomer(demo), await createCustomer(demo)];
      const email = uniqueEmail('race');

      const results = await Promise.all([patch(a.id, { email }), patch(b.id, { email })]);

      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(results.find((r) => r.status === 409)!.body.error).toBe('customer_email_taken');
      expect(await t.deps.db.customer.count({ where: { tenantId: demo.tenant.id, email } })).toBe(1);
    });

    it.each([
      [{}],
      [{ nickname: 'Bob' }],
      [{ email: 'not-an-email' }],
      [{ email: null }],
      [{ first_name: '' }],
      [{ first_name: null }],
      [{ first_name: 'x'.repeat(101) }],
      [{ last_name: '' }],
      [{ phone: 'x'.repeat(41) }],
      [{ tags: 'vip' }],
      [{ tags: ['vip', 'vip'] }],
      [{ tags: [''] }],
      [{ tags: ['x'.repeat(51)] }],
      [{ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }],
      [{ marketing_opt_in: 'yes' }],
    ])('when the body is %j, then it is 400 invalid_body and nothing is recorded', async (body) => {
      const customer = await createCustomer(demo);

      const res = await patch(customer.id, body);

      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(await customerEvents(customer.id)).toEqual([]);
    });

    it("when the customer is another tenant's or not a uuid, then it is 404 customer_not_found", async () => {
      const theirs = await createCustomer(other);

      const foreign = await patch(theirs.id, { first_name: 'Hijack' });
      const malformed = await patch('nope', { first_name: 'Hijack' });

      expect(foreign.status).toBe(404);
      expect(foreign.body.error).toBe('customer_not_found');
      expect(malformed.status).toBe(404);
      expect((await t.deps.db.customer.findUniqueOrThrow({ where: { id: theirs.id } })).firstName).toBe('Direct');
    });
  });

  describe('POST /api/customers/{id}/anonymise', () => {
    it('when a manager anonymises a customer, then personal data is erased, bookings stay, and no event is recorded', async () => {
      const email = uniqueEmail('forget');
      const { bookingId, customerId } = await book(demo, {
        email,
        first_name: 'Hedy',
        last_name: 'Lamarr',
        phone: '+1 555 0142',
      });
      await patch(customerId, { tags: ['vip'], marketing_opt_in: true }).expect(200);
      const eventsBefore = await customerEvents(customerId);

      const res = await anonymise(customerId);

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: customerId,
        email: null,
        first_name: null,
        last_name: null,
        phone: null,
        tags: [],
        marketing_opt_in: false,
        anonymised: true,
        booking_count: 1,
      });
      const stored = await t.deps.db.customer.findUniqueOrThrow({ where: { id: customerId } });
      expect(stored).toMatchObject({
        email: `anonymised+${customerId}@invalid`,
        firstName: 'Anonymised',
        lastName: null,
        phone: null,
        tags: [],
        marketingOptIn: false,
      });
      expect(stored.anonymisedAt?.toISOString()).toBe(res.body.anonymised_at);
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: bookingId } })).customerId).toBe(customerId);
      expect(await customerEvents(customerId)).toEqual(eventsBefore);
      const detail = await getOne(customerId);
      expect(detail.body).toMatchObject({ email: null, anonymised: true, bookings: [{ booking_id: bookingId }] });
    });

    it('when the old address books again, then a new customer is created with customer.created and the anonymised one stays silent', async () => {
      const email = uniqueEmail('returning');
      const first = await book(demo, { email, first_name: 'Alan', phone: '+1 555 0001' });
      await anonymise(first.customerId).expect(200);
      const eventsBefore = await customerEvents(first.customerId);

      const again = await book(demo, { email, first_name: 'Alan', phone: '+1 555 0002' });

      expect(again.customerId).not.toBe(first.customerId);
      const created = await customerEvents(again.customerId, 'customer.created');
      expect(created).toHaveLength(1);
      expect(created[0]!.data).toEqual({
        event_id: created[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['customer.created'],
        entity_type: 'customer',
        entity_id: again.customerId,
        customer_id: again.customerId,
        source: 'booking',
      });
      expect(await customerEvents(first.customerId)).toEqual(eventsBefore);
      expect((await getOne(first.customerId)).body).toMatchObject({ anonymised: true, booking_count: 1 });
      expect((await list(demo, { email })).body.data.map((c: { id: string }) => c.id)).toEqual([again.customerId]);
    });

    it("when a booking names the anonymised customer's placeholder address, then it is refused as invalid", async () => {
      const customer = await createCustomer(demo);
      await anonymise(customer.id).expect(200);
      const experience = demo.experiences[0]!;
      const ip = clientIp();
      const holdId = await placeHold(t, ip, experience, experience.slots[0]!.id, 1);

      const res = await request(t.app)
        .post('/api/bookings')
        .set('X-Forwarded-For', ip)
        .send({
          ...bookingBody(demo, experience, experience.slots[0]!.id, holdId, 1),
          customer: { email: `anonymised+${customer.id}@invalid`, first_name: 'Revived' },
        });

      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        error: 'invalid_body',
        detail: [{ field: '/customer/email', message: expect.any(String) }],
      });
      expect(await customerEvents(customer.id)).toEqual([]);
    });

    it('when the customer is already anonymised, then anonymising or changing it again is 409 customer_anonymised', async () => {
      const customer = await createCustomer(demo);
      await anonymise(customer.id).expect(200);
      const before = await t.deps.db.customer.findUniqueOrThrow({ where: { id: customer.id } });

      const repeat = await anonymise(customer.id);
      const change = await patch(customer.id, { first_name: 'Back', marketing_opt_in: true });

      expect(repeat.status).toBe(409);
      expect(repeat.body.error).toBe('customer_anonymised');
      expect(change.status).toBe(409);
      expect(change.body.error).toBe('customer_anonymised');
      expect(await t.deps.db.customer.findUniqueOrThrow({ where: { id: customer.id } })).toEqual(before);
      expect(await customerEvents(customer.id)).toEqual([]);
    });

    it('when a membership holder is anonymised, then every photo showing them is deleted and no longer served, and photos of others stay', async () => {
      const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('face')]);
      const putPhoto = (membershipId: string, image: Buffer) =>
        request(t.app)
          .put(`/api/v1/memberships/${membershipId}/holder-photo`)
          .set('Authorization', bearer(demo.api_keys.staff))
          .set('Content-Type', 'image/png')
          .send(image);
      const getPhoto = (membershipId: string) =>
        request(t.app)
          .get(`/api/v1/memberships/${membershipId}/holder-photo`)
          .set('Authorization', bearer(demo.api_keys.staff));
      const plan = await seedMembershipPlan(t.deps.db, demo.tenant.id, { transferable: true });
      // One membership they hold, photographed twice; one they held (photographed) and gave away.
      const held = await seedMembership(t.deps.db, plan);
      const person = held.holderCustomerId;
      await putPhoto(held.id, PNG).expect(200);
      await putPhoto(held.id, Buffer.concat([PNG, Buffer.from('again')])).expect(200);
      const given = await seedMembership(t.deps.db, plan);
      await t.deps.db.membership.update({ where: { id: given.id }, data: { holderCustomerId: person } });
      await putPhoto(given.id, PNG).expect(200);
      await request(t.app)
        .post(`/api/v1/memberships/${given.id}/holder`)
        .set('Authorization', bearer(demo.api_keys.manager))
        .send({ customer_id: given.customerId })
        .expect(200);
      const othersPhoto = await putPhoto(given.id, Buffer.concat([PNG, Buffer.from('someone else')])).expect(200);
      expect(await t.deps.db.membershipPhoto.count({ where: { holderCustomerId: person } })).toBe(3);

      await anonymise(person).expect(200);

      expect(await t.deps.db.membershipPhoto.count({ where: { holderCustomerId: person } })).toBe(0);
      const photo = await getPhoto(held.id);
      expect([photo.status, photo.body.error]).toEqual([404, 'photo_not_found']);
      expect(await t.deps.db.membership.findUniqueOrThrow({ where: { id: held.id } })).toMatchObject({
        holderCustomerId: person,
        holderPhotoId: null,
      });
      const kept = await getPhoto(given.id);
      expect(kept.status).toBe(200);
      expect((await t.deps.db.membership.findUniqueOrThrow({ where: { id: given.id } })).holderPhotoId).toBe(
        othersPhoto.body.photo_id,
      );
    });

    it("when the customer is another tenant's, then it is 404 customer_not_found and nothing is erased", async () => {
      const theirs = await createCustomer(other);

      const res = await anonymise(theirs.id);

      expect(res.status).toBe(404);
      expect(res.body.error).toBe('customer_not_found');
      expect((await t.deps.db.customer.findUniqueOrThrow({ where: { id: theirs.id } })).anonymisedAt).toBeNull();
    });
  });

  describe('emails stored in mixed case before this version (migration 20261126234000)', () => {
    it('when the migration runs, then each is lower-cased, the oldest of a group that lower-cases alike, and none that would meet an existing customer', async () => {
      const tenant = await seedTenant(t.deps);
      const tag = randomUUID().slice(0, 8);
      const alone = await createCustomer(tenant, { email: `Sam-${tag}@Example.com` });
      const older = await createCustomer(tenant, {
        email: `Ann-${tag}@Example.com`,
        createdAt: new Date(Date.now() - 60_000),
      });
      const newer = await createCustomer(tenant, { email: `ANN-${tag}@example.com` });
      await createCustomer(tenant, { email: `kim-${tag}@example.com` });
      const twin = await createCustomer(tenant, { email: `Kim-${tag}@Example.com` });
      const sql = readFileSync(
        path.join(__dirname, '../../../prisma/migrations/20261126234000_lower_case_customer_emails/migration.sql'),
        'utf8',
      );

      await t.deps.db.$executeRawUnsafe(sql);

      const email = async (id: string) => (await t.deps.db.customer.findUniqueOrThrow({ where: { id } })).email;
      expect(await email(alone.id)).toBe(`sam-${tag}@example.com`);
      expect(await email(older.id)).toBe(`ann-${tag}@example.com`);
      expect(await email(newer.id)).toBe(`ANN-${tag}@example.com`);
      expect(await email(twin.id)).toBe(`Kim-${tag}@Example.com`);
    });
  });

  describe('roles', () => {
    it('when a staff key reads, then it may; when it changes or erases, then it is 403; without a key, 401', async () => {
      const customer = await createCustomer(demo);
      const { bookingId } = await book(demo, { email: uniqueEmail('roles'), first_name: 'Roles' });

      expect((await list(demo, {}, demo.api_keys.staff)).status).toBe(200);
      expect((await getOne(customer.id, demo.api_keys.staff)).status).toBe(200);
      expect(
        (await request(t.app).get(`/api/v1/bookings/${bookingId}`).set('Authorization', bearer(demo.api_keys.staff)))
          .status,
      ).toBe(200);

      const staffPatch = await patch(customer.id, { first_name: 'Nope' }, demo.api_keys.staff);
      const staffErase = await anonymise(customer.id, demo.api_keys.staff);
      expect([staffPatch.status, staffPatch.body.error]).toEqual([403, 'forbidden']);
      expect([staffErase.status, staffErase.body.error]).toEqual([403, 'forbidden']);
      expect((await patch(customer.id, { first_name: 'Admin' }, demo.api_keys.admin)).status).toBe(200);

      const anonymous = [
        request(t.app).get('/api/v1/customers'),
        request(t.app).get(`/api/v1/customers/${customer.id}`),
        request(t.app).get(`/api/v1/bookings/${bookingId}`),
        request(t.app).patch(`/api/customers/${customer.id}`).send({ first_name: 'Anon' }),
        request(t.app).post(`/api/customers/${customer.id}/anonymise`),
      ];
      for (const res of await Promise.all(anonymous)) {
        expect([res.status, res.body.error]).toEqual([401, 'unauthorized']);
      }
      const stored = await t.deps.db.customer.findUniqueOrThrow({ where: { id: customer.id } });
      expect(stored).toMatchObject({ firstName: 'Admin', anonymisedAt: null });
    });
  });

  describe('GET /api/v1/bookings/{id}', () => {
    it('when a booking is read through v1, then the body is that of GET /api/bookings/{id}', async () => {
      const { bookingId } = await book(demo, { email: uniqueEmail('v1'), first_name: 'Vee', phone: '+1 555 0111' });

      const v1 = await request(t.app)
        .get(`/api/v1/bookings/${bookingId}`)
        .set('Authorization', bearer(demo.api_keys.staff));
      const operator = await request(t.app)
        .get(`/api/bookings/${bookingId}`)
        .set('Authorization', bearer(demo.api_keys.staff));

      expect(v1.status).toBe(200);
      expect(operator.status).toBe(200);
      expect(v1.body).toEqual(operator.body);
      expect(v1.body).toMatchObject({ booking_id: bookingId, status: 'confirmed', customer: { phone: '+1 555 0111' } });
    });

    it("when the booking is another tenant's or the id is not a uuid, then it is 404 booking_not_found", async () => {
      const { bookingId } = await book(other, { email: uniqueEmail('theirs'), first_name: 'Other' });

      for (const id of [bookingId, 'not-a-uuid']) {
        const res = await request(t.app)
          .get(`/api/v1/bookings/${id}`)
          .set('Authorization', bearer(demo.api_keys.staff));
        expect(res.status).toBe(404);
        expect(res.body.error).toBe('booking_not_found');
      }
    });
  });

  describe('customer events from bookings', () => {
    it('when an email books first, then again with a new phone, then again identically, then customer.created, one customer.updated [phone], and nothing more', async () => {
      const email = uniqueEmail('journey');
      const contact = { email, first_name: 'Mae', last_name: 'Jemison' };

      const first = await book(demo, contact);
      const created = await customerEvents(first.customerId, 'customer.created');
      const second = await book(demo, { ...contact, phone: '+1 555 0177' });
      const updated = await customerEvents(first.customerId, 'customer.updated');
      const third = await book(demo, { ...contact, phone: '+1 555 0177' });

      expect(second.customerId).toBe(first.customerId);
      expect(third.customerId).toBe(first.customerId);
      expect(created).toHaveLength(1);
      expect(created[0]!.tenantId).toBe(demo.tenant.id);
      expect(created[0]!.data).toEqual({
        event_id: created[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['customer.created'],
        entity_type: 'customer',
        entity_id: first.customerId,
        customer_id: first.customerId,
        source: 'booking',
      });
      expect(updated).toHaveLength(1);
      expect(updated[0]!.data).toEqual({
        event_id: updated[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['customer.updated'],
        entity_type: 'customer',
        entity_id: first.customerId,
        customer_id: first.customerId,
        changed_fields: ['phone'],
      });
      const all = await customerEvents(first.customerId);
      expect(all.map((e) => e.name)).toEqual(['customer.created', 'customer.updated']);
      expect((await getOne(first.customerId)).body).toMatchObject({ phone: '+1 555 0177', booking_count: 3 });
    });
  });
});
