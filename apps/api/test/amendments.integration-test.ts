import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS } from '@booking/events';
import { signToken } from '@booking/signing';
import {
  bearer,
  clientIp,
  confirmedBooking,
  createTestApp,
  type Experience,
  heldBooking,
  keyIdOf,
  placeHold,
  seedTenant,
  sleep,
  type TestApp,
} from '@booking/test-kit';

interface MadeBooking {
  bookingId: string;
  slotId: string;
  guestCount: number;
  totalCents: number;
  manageToken: string;
  bookingToken: string;
  email: string;
}

describe('booking amendments: reschedule, transfer, party', () => {
  let t: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
  });
  afterAll(() => t.close());

  /** A booking through the kit's factory, confirmed (paid by the seed's big gift card) unless told otherwise. */
  async function makeBooking(
    tenant: DemoTenant,
    options: { confirmed?: boolean; experience?: Experience; slotIndex?: number; guests?: number } = {},
  ): Promise<MadeBooking> {
    const { confirmed = true, ...choices } = options;
    const booked = await (confirmed ? confirmedBooking : heldBooking)(t, tenant, choices);
    return {
      bookingId: booked.booking_id,
      slotId: booked.slotId,
      guestCount: booked.guests,
      totalCents: booked.total_cents,
      manageToken: booked.manage_token,
      bookingToken: booked.booking_token,
      email: booked.email,
    };
  }

  const bookingRow = (id: string) => t.deps.db.booking.findUniqueOrThrow({ where: { id } });
  const seatsBooked = async (slotId: string) =>
    (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
  const setCapacity = (slotId: string, capacity: number) =>
    t.deps.db.slot.update({ where: { id: slotId }, data: { capacity } });
  const eventsOf = (entityId: string, name: string) =>
    t.deps.db.event.findMany({ where: { entityId, name }, orderBy: { createdAt: 'asc' } });
  const amendmentsOf = (bookingId: string) =>
    t.deps.db.bookingAmendment.findMany({ where: { bookingId }, orderBy: { createdAt: 'asc' } });
  const slotTimes = async (slotId: string) => {
    const slot = await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } });
    return { id: slot.id, starts_at: slot.startsAt.toISOString(), ends_at: slot.endsAt.toISOString() };
  };

  const reschedule = (id: string, body: object, auth: { key?: string; token?: string }) => {
    const req = request(t.app).post(`/api/bookings/${id}/reschedule`);
    if (auth.key) req.set('Authorization', bearer(auth.key));
    if (auth.token !== undefined) req.set('X-Manage-Token', auth.token);
    return req.send(body);
  };
  const transfer = (id: string, body: object, key: string) =>
    request(t.app).post(`/api/bookings/${id}/transfer`).set('Authorization', bearer(key)).send(body);
  const party = (id: string, body: object, key: string) =>
    request(t.app).post(`/api/bookings/${id}/party`).set('Authorization', bearer(key)).send(body);

  describe('POST /api/bookings/{id}/reschedule', () => {
    it('when a manager moves a confirmed booking to a differently priced slot, then the seats move, payment is unchanged, and the amendment and booking.rescheduled are recorded', async () => {
      const kayak = demo.experiences[0]!;
      const booking = await makeBooking(demo, { slotIndex: 0, guests: 3 });
      const peak = kayak.slots[2]!;
      const [fromBefore, toBefore] = [await seatsBooked(booking.slotId), await seatsBooked(peak.id)];
      const paymentsBefore = await t.deps.db.payment.findMany({ where: { bookingId: booking.bookingId } });

      const res = await reschedule(
        booking.bookingId,
        { slot_id: peak.id, reason: 'guest asked for a later day' },
        { key: demo.api_keys.manager },
      );

      expect(res.status).toBe(200);
      const times = await slotTimes(peak.id);
      expect(res.body).toEqual({ booking_id: booking.bookingId, slot: times });
      const after = await bookingRow(booking.bookingId);
      expect(after).toMatchObject({ slotId: peak.id, status: 'confirmed', guestCount: 3 });
      expect(after.totalCents).toBe(booking.totalCents);
      expect(await t.deps.db.payment.findMany({ where: { bookingId: booking.bookingId } })).toEqual(paymentsBefore);
      expect(await seatsBooked(booking.slotId)).toBe(fromBefore - 3);
      expect(await seatsBooked(peak.id)).toBe(toBefore + 3);

      const managerKeyId = await keyIdOf(t, demo.api_keys.manager);
      expect(await amendmentsOf(booking.bookingId)).toEqual([
        expect.objectContaining({
          tenantId: demo.tenant.id,
          kind: 'reschedule',
          fromSlotId: booking.slotId,
          toSlotId: peak.id,
          guestDelta: 0,
          amountDeltaCents: 0,
          fromCustomerId: null,
          toCustomerId: null,
          reason: 'guest asked for a later day',
          actorKeyId: managerKeyId,
        }),
      ]);
      const events = await eventsOf(booking.bookingId, 'booking.rescheduled');
      expect(events).toHaveLength(1);
      expect(events[0]!.tenantId).toBe(demo.tenant.id);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['booking.rescheduled'],
        entity_type: 'booking',
        entity_id: booking.bookingId,
        booking_id: booking.bookingId,
        experience_id: kayak.id,
        venue_id: demo.venue_id,
        slot_id: peak.id,
        customer_email: booking.email,
        new_slot_id: peak.id,
        new_slot_starts_at: times.starts_at,
        new_slot_ends_at: times.ends_at,
        rescheduled_by_user_id: managerKeyId,
        reason: 'guest asked for a later day',
      });
    });

    it("when the customer reschedules with the booking's manage token, then it moves and the event names no user and no reason", async () => {
      const booking = await makeBooking(demo, { slotIndex: 0, guests: 1 });
      const target = demo.experiences[0]!.slots[3]!.id;

      // In upper case, as some clients print uuids: the token still names this booking.
      const res = await reschedule(
        booking.bookingId.toUpperCase(),
        { slot_id: target.toUpperCase() },
        { token: booking.manageToken },
      );

      expect(res.status).toBe(200);
      expect(res.body.slot.id).toBe(target);
      expect((await bookingRow(booking.bookingId)).slotId).toBe(target);
      expect(await amendmentsOf(booking.bookingId)).toEqual([
        expect.objectContaining({ kind: 'reschedule', actorKeyId: null, reason: null, toSlotId: target }),
      ]);
      const events = await eventsOf(booking.bookingId, 'booking.rescheduled');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ new_slot_id: target, rescheduled_by_user_id: null, reason: null });
    });

    it('when an admin key reschedules, then it is allowed (manager or higher)', async () => {
      const booking = await makeBooking(demo, { slotIndex: 0, guests: 1 });

      const res = await reschedule(
        booking.bookingId,
        { slot_id: demo.experiences[0]!.slots[4]!.id },
        { key: demo.api_keys.admin },
      );

      expect(res.status).toBe(200);
      expect((await eventsOf(booking.bookingId, 'booking.rescheduled'))[0]!.data).toMatchObject({
        rescheduled_by_user_id: await keyIdOf(t, demo.api_keys.admin),
      });
    });

    it('when the manage token is bad, for another booking, of another purpose, expired or missing, then it is 401 and nothing moves', async () => {
      const booking = await makeBooking(demo, { slotIndex: 0, guests: 1 });
      const otherBooking = await makeBooking(demo, { slotIndex: 0, guests: 1 });
      const secret = t.deps.config.tokenSigningSecret;
      const expired = signToken(secret, 'manage', {
        subject: booking.bookingId,
        tenantId: demo.tenant.id,
        ttlSeconds: 60,
        now: new Date(Date.now() - 60 * 60 * 1000),
      });
      const body = { slot_id: demo.experiences[0]!.slots[1]!.id };

      const cases: [{ key?: string; token?: string }, string][] = [
        [{ token: 'garbage' }, 'invalid_token'],
        [{ token: '' }, 'invalid_token'],
        [{ token: otherBooking.manageToken }, 'invalid_token'],
        [{ token: booking.bookingToken }, 'invalid_token'],
        [{ token: `${booking.manageToken}x` }, 'invalid_token'],
        [{ token: expired }, 'token_expired'],
        [{}, 'unauthorized'],
        [{ key: 'svc_nope.nope' }, 'unauthorized'],
      ];
      for (const [auth, code] of cases) {
        const res = await reschedule(booking.bookingId, body, auth);
        expect({ auth, status: res.status, error: res.body.error }).toEqual({ auth, status: 401, error: code });
      }
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
      expect(await eventsOf(booking.bookingId, 'booking.rescheduled')).toHaveLength(0);
      expect(await amendmentsOf(booking.bookingId)).toHaveLength(0);
    });

    it('when a staff key reschedules, then it is 403 forbidden', async () => {
      const booking = await makeBooking(demo, { slotIndex: 0, guests: 1 });

      const res = await reschedule(
        booking.bookingId,
        { slot_id: demo.experiences[0]!.slots[1]!.id },
        { key: demo.api_keys.staff },
      );

      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
    });

    it("when the booking or the slot is another tenant's, then it is 404 and nothing moves", async () => {
      const theirs = await makeBooking(other, { slotIndex: 0, guests: 1 });
      const ours = await makeBooking(demo, { slotIndex: 0, guests: 1 });
      const theirTarget = other.experiences[0]!.slots[1]!.id;
      const theirSeats = await seatsBooked(theirTarget);

      const foreignBooking = await reschedule(
        theirs.bookingId,
        { slot_id: theirTarget },
        { key: demo.api_keys.manager },
      );
      const foreignSlot = await reschedule(ours.bookingId, { slot_id: theirTarget }, { key: demo.api_keys.manager });
      const unknownSlot = await reschedule(
        ours.bookingId,
        { slot_id: '00000000-0000-4000-8000-000000000009' },
        { key: demo.api_keys.manager },
      );
      const notUuid = await reschedule('not-a-uuid', { slot_id: theirTarget }, { key: demo.api_keys.manager });

      expect([foreignBooking, foreignSlot, unknownSlot, notUuid].map((r) => [r.status, r.body.error])).toEqual([
        [404, 'booking_not_found'],
        [404, 'slot_not_found'],
        [404, 'slot_not_found'],
        [404, 'booking_not_found'],
      ]);
      expect((await bookingRow(theirs.bookingId)).slotId).toBe(theirs.slotId);
      expect((await bookingRow(ours.bookingId)).slotId).toBe(ours.slotId);
      expect(await seatsBooked(theirTarget)).toBe(theirSeats);
    });

    it('when the body is invalid or names the same slot, then it is 400 invalid_body', async () => {
      const booking = await makeBooking(demo, { slotIndex: 0, guests: 1 });
      const slot1 = demo.experiences[0]!.slots[1]!.id;

      for (const body of [
        {},
        { slot_id: 'nope' },
        { slot_id: slot1, reason: 'x'.repeat(501) },
        { slot_id: slot1, reason: '' },
        { slot_id: slot1, reason: '   ' },
        { slot_id: slot1, extra: true },
        { slot_id: booking.slotId },
      ]) {
        const res = await reschedule(booking.bookingId, body, { key: demo.api_keys.manager });
        expect({ body, status: res.status, error: res.body.error }).toEqual({
          body,
          status: 400,
          error: 'invalid_body',
        });
        expect(res.body.detail).toEqual(
          expect.arrayContaining([expect.objectContaining({ field: expect.any(String) })]),
        );
      }
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
      expect(await amendmentsOf(booking.bookingId)).toHaveLength(0);
    });

    it("when the slot is another experience's, then 400 experience_slot_mismatch; when it has started, then 409 slot_unavailable", async () => {
      const booking = await makeBooking(demo, { slotIndex: 0, guests: 2 });
      const escapeSlot = demo.experiences[1]!.slots[1]!.id;
      const pastSlot = demo.experiences[0]!.slots[7]!.id;
      const pastSeats = await seatsBooked(pastSlot);

      const mismatch = await reschedule(booking.bookingId, { slot_id: escapeSlot }, { key: demo.api_keys.manager });
      const past = await reschedule(booking.bookingId, { slot_id: pastSlot }, { key: demo.api_keys.manager });

      expect([mismatch.status, mismatch.body.error]).toEqual([400, 'experience_slot_mismatch']);
      expect([past.status, past.body.error]).toEqual([409, 'slot_unavailable']);
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
      expect(await seatsBooked(pastSlot)).toBe(pastSeats);
    });

    it('when the booking is held or cancelled, then it is 409 booking_not_amendable', async () => {
      const held = await makeBooking(demo, { confirmed: false, slotIndex: 0, guests: 1 });
      const cancelled = await makeBooking(demo, { slotIndex: 0, guests: 1 });
      await request(t.app)
        .post(`/api/bookings/${cancelled.bookingId}/cancel`)
        .set('Authorization', bearer(demo.api_keys.manager))
        .expect(200);
      const body = { slot_id: demo.experiences[0]!.slots[1]!.id };

      const heldRes = await reschedule(held.bookingId, body, { key: demo.api_keys.manager });
      const cancelledRes = await reschedule(cancelled.bookingId, body, { token: cancelled.manageToken });

      expect([heldRes.status, heldRes.body.error]).toEqual([409, 'booking_not_amendable']);
      expect([cancelledRes.status, cancelledRes.body.error]).toEqual([409, 'booking_not_amendable']);
      expect((await bookingRow(held.bookingId)).slotId).toBe(held.slotId);
    });

    it('when the new slot has no room beside its booked seats and live holds, then it is 409 capacity_exceeded and nothing moves', async () => {
      const tenant = await seedTenant(t.deps);
      const kayak = tenant.experiences[0]!;
      const booking = await makeBooking(tenant, { slotIndex: 0, guests: 2 });
      const target = kayak.slots[1]!.id;
      await setCapacity(target, 3);
      await placeHold(t, clientIp(), kayak, target, 2);

      const res = await reschedule(booking.bookingId, { slot_id: target }, { key: tenant.api_keys.manager });

      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ error: 'capacity_exceeded', detail: { guest_count: 2, seats_remaining: 1 } });
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
      expect(await seatsBooked(target)).toBe(0);
      expect(await seatsBooked(booking.slotId)).toBe(2);
      expect(await eventsOf(booking.bookingId, 'booking.rescheduled')).toHaveLength(0);
    });

    it('when four bookings race into a slot with room for one of them, then exactly one moves and capacity is never exceeded', async () => {
      const tenant = await seedTenant(t.deps);
      const kayak = tenant.experiences[0]!;
      const bookings = await Promise.all(
        [0, 1, 3, 4].map((slotIndex) => makeBooking(tenant, { slotIndex, guests: 2 })),
      );
      const target = kayak.slots[2]!.id;
      await setCapacity(target, 3);

      const results = await Promise.all(
        bookings.map((b) => reschedule(b.bookingId, { slot_id: target }, { key: tenant.api_keys.manager })),
      );

      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      expect(results.filter((r) => r.status === 409).every((r) => r.body.error === 'capacity_exceeded')).toBe(true);
      expect(await seatsBooked(target)).toBe(2);
      const winner = bookings[results.findIndex((r) => r.status === 200)]!;
      for (const b of bookings) {
        const row = await bookingRow(b.bookingId);
        expect(row.slotId).toBe(b === winner ? target : b.slotId);
        expect(await seatsBooked(b.slotId)).toBe(b === winner ? 0 : 2);
        expect(await eventsOf(b.bookingId, 'booking.rescheduled')).toHaveLength(b === winner ? 1 : 0);
      }
    });

    it('when two bookings swap slots at the same moment, then both moves succeed without deadlock and the seat counts add up', async () => {
      const tenant = await seedTenant(t.deps);
      const kayak = tenant.experiences[0]!;
      const [slotA, slotB] = [kayak.slots[4]!.id, kayak.slots[5]!.id];
      const [x, y] = await Promise.all([
        makeBooking(tenant, { slotIndex: 4, guests: 3 }),
        makeBooking(tenant, { slotIndex: 5, guests: 5 }),
      ]);

      const results = await Promise.all([
        reschedule(x.bookingId, { slot_id: slotB }, { key: tenant.api_keys.manager }),
        reschedule(y.bookingId, { slot_id: slotA }, { key: tenant.api_keys.manager }),
      ]);

      expect(results.map((r) => r.status)).toEqual([200, 200]);
      expect(await seatsBooked(slotA)).toBe(5);
      expect(await seatsBooked(slotB)).toBe(3);
    });

    it('when the customer asks once the visit has started, then it is 409 booking_not_amendable and nothing moves', async () => {
      const own = await seedTenant(t.deps);
      const booking = await makeBooking(own, { slotIndex: 0, guests: 2 });
      // The booking's slot started a minute ago; its manage link, made for that start, is still valid.
      await t.deps.db.slot.update({
        where: { id: booking.slotId },
        data: { startsAt: new Date(Date.now() - 60_000) },
      });
      const later = own.experiences[0]!.slots[1]!;

      const res = await reschedule(booking.bookingId, { slot_id: later.id }, { token: booking.manageToken });

      expect([res.status, res.body.error]).toEqual([409, 'booking_not_amendable']);
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
      expect(await eventsOf(booking.bookingId, 'booking.rescheduled')).toHaveLength(0);
    });

    it('when the customer moved the visit to a later slot, then the same manage link moves it again once the first slot has started', async () => {
      const own = await seedTenant(t.deps);
      const first = own.experiences[0]!.slots[0]!.id;
      // The first slot starts in 5 s: a link that lived only until then is spent below.
      const startsAt = new Date(Date.now() + 5_000);
      await t.deps.db.slot.update({
        where: { id: first },
        data: { startsAt, endsAt: new Date(startsAt.getTime() + 3600_000) },
      });
      const booking = await makeBooking(own, { slotIndex: 0, guests: 1 });
      const later = own.experiences[0]!.slots[2]!.id;
      const moved = await reschedule(booking.bookingId, { slot_id: later }, { token: booking.manageToken });
      expect(moved.status).toBe(200);
      await sleep(Math.max(0, startsAt.getTime() - Date.now()) + 500);

      const again = own.experiences[0]!.slots[3]!.id;
      const res = await reschedule(booking.bookingId, { slot_id: again }, { token: booking.manageToken });

      expect(res.status).toBe(200);
      expect((await bookingRow(booking.bookingId)).slotId).toBe(again);
    });

    it('when the booking has been checked in, then even a manager gets 409 booking_not_amendable', async () => {
      const booking = await makeBooking(demo, { slotIndex: 1, guests: 1 });
      await t.deps.db.booking.update({ where: { id: booking.bookingId }, data: { checkedInAt: new Date() } });

      const res = await reschedule(
        booking.bookingId,
        { slot_id: demo.experiences[0]!.slots[2]!.id },
        { key: demo.api_keys.manager },
      );

      expect([res.status, res.body.error]).toEqual([409, 'booking_not_amendable']);
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
    });
  });

  describe('POST /api/bookings/{id}/transfer', () => {
    it("when a booking is transferred, then the old customer's manage token no longer reschedules it", async () => {
      const booking = await makeBooking(demo, { slotIndex: 3, guests: 1 });
      const moved = await transfer(
        booking.bookingId,
        { customer: { email: `new-owner-${Date.now()}@example.com`, first_name: 'Nia' }, reason: 'gift' },
        demo.api_keys.manager,
      );
      expect(moved.status).toBe(200);

      const target = demo.experiences[0]!.slots[4]!.id;
      const res = await reschedule(booking.bookingId, { slot_id: target }, { token: booking.manageToken });

      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
      expect((await bookingRow(booking.bookingId)).slotId).toBe(booking.slotId);
    });

    it("when a booking is transferred, then the answer carries the new customer's manage token, which reschedules it", async () => {
      const booking = await makeBooking(demo, { slotIndex: 3, guests: 1 });
      const moved = await transfer(
        booking.bookingId,
        { customer: { email: `new-owner-${Date.now()}@example.com`, first_name: 'Nia' }, reason: 'gift' },
        demo.api_keys.manager,
      );
      expect(moved.status).toBe(200);

      const target = demo.experiences[0]!.slots[5]!.id;
      const res = await reschedule(
        booking.bookingId,
        { slot_id: target },
        { token: moved.body.manage_token as string },
      );

      expect(res.status).toBe(200);
      expect((await bookingRow(booking.bookingId)).slotId).toBe(target);
    });

    it('when a manager transfers a confirmed booking to a new email, then the booking has the new customer, the amendment and booking.transferred are recorded, and later booking events carry the new address', async () => {
      const kayak = demo.experiences[0]!;
      const booking = await makeBooking(demo, { slotIndex: 1, guests: 2 });
      const seatsBefore = await seatsBooked(booking.slotId);
      const previous = await bookingRow(booking.bookingId);
      const newEmail = `new-owner-${booking.bookingId.slice(0, 8)}@example.com`;

      const res = await transfer(
        booking.bookingId,
        {
          customer: { email: newEmail.toUpperCase(), first_name: 'Grace', last_name: 'Hopper', phone: '+1555' },
          reason: 'gifted to a friend',
        },
        demo.api_keys.manager,
      );

      expect(res.status).toBe(200);
      const newCustomer = await t.deps.db.customer.findUniqueOrThrow({
        where: { tenantId_email: { tenantId: demo.tenant.id, email: newEmail } },
      });
      expect(res.body).toEqual({
        booking_id: booking.bookingId,
        customer: { id: newCustomer.id, email: newEmail, first_name: 'Grace', last_name: 'Hopper', phone: '+1555' },
        manage_token: expect.any(String),
        // The seed's first experience needs a waiver.
        waiver_url: expect.stringContaining('/api/waivers/'),
      });
      const after = await bookingRow(booking.bookingId);
      expect(after).toMatchObject({ customerId: newCustomer.id, status: 'confirmed', slotId: booking.slotId });
      expect(after.totalCents).toBe(previous.totalCents);
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore);

      const view = await request(t.app)
        .get(`/api/bookings/${booking.bookingId}`)
        .set('Authorization', bearer(demo.api_keys.staff));
      expect(view.status).toBe(200);
      expect(view.body.customer).toEqual({
        id: newCustomer.id,
        email: newEmail,
        first_name: 'Grace',
        last_name: 'Hopper',
        phone: '+1555',
      });

      const managerKeyId = await keyIdOf(t, demo.api_keys.manager);
      expect(await amendmentsOf(booking.bookingId)).toEqual([
        expect.objectContaining({
          kind: 'transfer',
          fromCustomerId: previous.customerId,
          toCustomerId: newCustomer.id,
          guestDelta: 0,
          amountDeltaCents: 0,
          reason: 'gifted to a friend',
          actorKeyId: managerKeyId,
        }),
      ]);
      const events = await eventsOf(booking.bookingId, 'booking.transferred');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['booking.transferred'],
        entity_type: 'booking',
        entity_id: booking.bookingId,
        booking_id: booking.bookingId,
        experience_id: kayak.id,
        venue_id: demo.venue_id,
        slot_id: booking.slotId,
        customer_email: newEmail,
        to_email: newEmail,
        transferred_by_user: managerKeyId,
        reason: 'gifted to a friend',
      });
      expect(await eventsOf(newCustomer.id, 'customer.created')).toHaveLength(1);

      // Later messages go to the new address: the next booking event names the new customer.
      await reschedule(booking.bookingId, { slot_id: kayak.slots[3]!.id }, { key: demo.api_keys.manager }).expect(200);
      const [rescheduled] = await eventsOf(booking.bookingId, 'booking.rescheduled');
      expect(rescheduled!.data).toMatchObject({ customer_email: newEmail });
    });

    it('when the booking goes to an existing customer with new contact details, then that customer is reused and customer.updated is recorded', async () => {
      const first = await makeBooking(demo, { slotIndex: 1, guests: 1 });
      const second = await makeBooking(demo, { slotIndex: 1, guests: 1 });
      const existing = await t.deps.db.customer.findUniqueOrThrow({
        where: { tenantId_email: { tenantId: demo.tenant.id, email: second.email } },
      });

      const res = await transfer(
        first.bookingId,
        { customer: { email: second.email, first_name: 'Renamed' }, reason: 'same family' },
        demo.api_keys.admin,
      );

      expect(res.status).toBe(200);
      expect(res.body.customer).toMatchObject({ id: existing.id, email: second.email, first_name: 'Renamed' });
      expect((await bookingRow(first.bookingId)).customerId).toBe(existing.id);
      const updated = await eventsOf(existing.id, 'customer.updated');
      expect(updated).toHaveLength(1);
      expect(updated[0]!.data).toMatchObject({ customer_id: existing.id, changed_fields: ['first_name'] });
    });

    it('when the body is invalid or names the current customer, then it is 400 invalid_body and nothing changes', async () => {
      const booking = await makeBooking(demo, { slotIndex: 1, guests: 1 });
      const customer = { email: 'someone-else@example.com', first_name: 'Sam' };

      for (const body of [
        {},
        { customer },
        { customer, reason: '' },
        { customer, reason: '  ' },
        { customer, reason: 'x'.repeat(501) },
        { customer: { ...customer, email: 'not-an-email' }, reason: 'r' },
        { customer: { email: customer.email }, reason: 'r' },
        { customer: { ...customer, phone: 'x'.repeat(41) }, reason: 'r' },
        { customer: { ...customer, extra: 1 }, reason: 'r' },
        { customer: { email: booking.email.toUpperCase(), first_name: 'Ada' }, reason: 'same person' },
      ]) {
        const res = await transfer(booking.bookingId, body, demo.api_keys.manager);
        expect({ body, status: res.status, error: res.body.error }).toEqual({
          body,
          status: 400,
          error: 'invalid_body',
        });
      }
      expect(await amendmentsOf(booking.bookingId)).toHaveLength(0);
      expect(await eventsOf(booking.bookingId, 'booking.transferred')).toHaveLength(0);
    });

    it('when a staff key transfers, then 403; when only a manage token is sent, then 401 unauthorized', async () => {
      const booking = await makeBooking(demo, { slotIndex: 1, guests: 1 });
      const body = { customer: { email: 'taker@example.com', first_name: 'Tak' }, reason: 'why not' };

      const staff = await transfer(booking.bookingId, body, demo.api_keys.staff);
      const token = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/transfer`)
        .set('X-Manage-Token', booking.manageToken)
        .send(body);

      expect([staff.status, staff.body.error]).toEqual([403, 'forbidden']);
      expect([token.status, token.body.error]).toEqual([401, 'unauthorized']);
      expect(await eventsOf(booking.bookingId, 'booking.transferred')).toHaveLength(0);
    });

    it("when the booking is another tenant's, then 404; when it is held, then 409 booking_not_amendable", async () => {
      const theirs = await makeBooking(other, { slotIndex: 1, guests: 1 });
      const held = await makeBooking(demo, { confirmed: false, slotIndex: 1, guests: 1 });
      const body = { customer: { email: 'taker2@example.com', first_name: 'Tak' }, reason: 'why not' };

      const foreign = await transfer(theirs.bookingId, body, demo.api_keys.manager);
      const notConfirmed = await transfer(held.bookingId, body, demo.api_keys.manager);

      expect([foreign.status, foreign.body.error]).toEqual([404, 'booking_not_found']);
      expect([notConfirmed.status, notConfirmed.body.error]).toEqual([409, 'booking_not_amendable']);
      expect(await t.deps.db.customer.count({ where: { tenantId: demo.tenant.id, email: 'taker2@example.com' } })).toBe(
        0,
      );
      expect(await eventsOf(theirs.bookingId, 'booking.transferred')).toHaveLength(0);
    });
  });

  describe('POST /api/bookings/{id}/party', () => {
    it('when a manager adds guests, then the seats, guest count and total move by the delta, and the amendment and booking.party_updated carry the booking and money deltas', async () => {
      const kayak = demo.experiences[0]!;
      const booking = await makeBooking(demo, { slotIndex: 5, guests: 2 });
      const before = await bookingRow(booking.bookingId);
      const seatsBefore = await seatsBooked(booking.slotId);

      const res = await party(booking.bookingId, { guest_count: 5, reason: 'cousins joined' }, demo.api_keys.manager);

      const delta = 3 * before.unitPriceCents;
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        booking_id: booking.bookingId,
        guest_count: 5,
        total_cents: before.totalCents + delta,
        amount_delta_cents: delta,
      });
      expect(await bookingRow(booking.bookingId)).toMatchObject({
        guestCount: 5,
        totalCents: before.totalCents + delta,
      });
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore + 3);

      const managerKeyId = await keyIdOf(t, demo.api_keys.manager);
      expect(await amendmentsOf(booking.bookingId)).toEqual([
        expect.objectContaining({
          kind: 'party',
          guestDelta: 3,
          amountDeltaCents: delta,
          fromSlotId: null,
          toSlotId: null,
          reason: 'cousins joined',
          actorKeyId: managerKeyId,
        }),
      ]);
      const events = await eventsOf(booking.bookingId, 'booking.party_updated');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['booking.party_updated'],
        entity_type: 'booking',
        entity_id: booking.bookingId,
        booking_id: booking.bookingId,
        experience_id: kayak.id,
        venue_id: demo.venue_id,
        slot_id: booking.slotId,
        customer_email: booking.email,
        guest_delta: 3,
        previous_guest_count: 2,
        guest_count: 5,
        amount_delta_cents: delta,
        total_cents: before.totalCents + delta,
        currency: 'USD',
        actor_user_id: managerKeyId,
        reason: 'cousins joined',
      });
    });

    it('when guests are removed, then the seats return and the money delta is negative', async () => {
      const booking = await makeBooking(demo, { slotIndex: 5, guests: 4 });
      const before = await bookingRow(booking.bookingId);
      const seatsBefore = await seatsBooked(booking.slotId);

      const res = await party(booking.bookingId, { guest_count: 1 }, demo.api_keys.admin);

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ guest_count: 1, amount_delta_cents: -3 * before.unitPriceCents });
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 3);
      expect((await bookingRow(booking.bookingId)).totalCents).toBe(before.totalCents - 3 * before.unitPriceCents);
      const [event] = await eventsOf(booking.bookingId, 'booking.party_updated');
      expect(event!.data).toMatchObject({
        guest_delta: -3,
        previous_guest_count: 4,
        guest_count: 1,
        amount_delta_cents: -3 * before.unitPriceCents,
        reason: null,
      });
    });

    it("when the guest count is outside 1..200 or the experience's party size, then 400 invalid_guest_count; other bad bodies and the same count are 400 invalid_body", async () => {
      const kayakBooking = await makeBooking(demo, { slotIndex: 5, guests: 2 });
      const escapeBooking = await makeBooking(demo, { experience: demo.experiences[1]!, slotIndex: 5, guests: 2 });

      const cases: [string, object, string][] = [
        [kayakBooking.bookingId, { guest_count: 0 }, 'invalid_guest_count'],
        [kayakBooking.bookingId, { guest_count: 201 }, 'invalid_guest_count'],
        [kayakBooking.bookingId, { guest_count: 2.5 }, 'invalid_body'],
        [kayakBooking.bookingId, { guest_count: 13 }, 'invalid_guest_count'],
        [escapeBooking.bookingId, { guest_count: 1 }, 'invalid_guest_count'],
        [kayakBooking.bookingId, { guest_count: 3, reason: 'x'.repeat(501) }, 'invalid_body'],
        [kayakBooking.bookingId, { guest_count: 3, extra: true }, 'invalid_body'],
        [kayakBooking.bookingId, { guest_count: 2 }, 'invalid_body'],
      ];
      for (const [id, body, code] of cases) {
        const res = await party(id, body, demo.api_keys.manager);
        expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error: code });
      }
      const outOfParty = await party(kayakBooking.bookingId, { guest_count: 13 }, demo.api_keys.manager);
      expect(outOfParty.body.detail).toEqual({ min_party_size: 1, max_party_size: 12 });
      expect((await bookingRow(kayakBooking.bookingId)).guestCount).toBe(2);
      expect((await bookingRow(escapeBooking.bookingId)).guestCount).toBe(2);
      expect(await amendmentsOf(kayakBooking.bookingId)).toHaveLength(0);
    });

    it('when a staff key or a manage token asks, then 403 and 401; another tenant, 404; a held booking, 409', async () => {
      const booking = await makeBooking(demo, { slotIndex: 5, guests: 1 });
      const theirs = await makeBooking(other, { slotIndex: 5, guests: 1 });
      const held = await makeBooking(demo, { confirmed: false, slotIndex: 5, guests: 1 });

      const staff = await party(booking.bookingId, { guest_count: 2 }, demo.api_keys.staff);
      const token = await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/party`)
        .set('X-Manage-Token', booking.manageToken)
        .send({ guest_count: 2 });
      const foreign = await party(theirs.bookingId, { guest_count: 2 }, demo.api_keys.manager);
      const notConfirmed = await party(held.bookingId, { guest_count: 2 }, demo.api_keys.manager);

      expect([staff, token, foreign, notConfirmed].map((r) => [r.status, r.body.error])).toEqual([
        [403, 'forbidden'],
        [401, 'unauthorized'],
        [404, 'booking_not_found'],
        [409, 'booking_not_amendable'],
      ]);
      expect((await bookingRow(booking.bookingId)).guestCount).toBe(1);
      expect((await bookingRow(theirs.bookingId)).guestCount).toBe(1);
      expect((await bookingRow(held.bookingId)).guestCount).toBe(1);
    });

    it('when the added guests do not fit beside the booked seats and live holds, then 409 capacity_exceeded and nothing changes', async () => {
      const tenant = await seedTenant(t.deps);
      const kayak = tenant.experiences[0]!;
      const booking = await makeBooking(tenant, { slotIndex: 0, guests: 2 });
      await setCapacity(booking.slotId, 5);
      await placeHold(t, clientIp(), kayak, booking.slotId, 2);

      const tooMany = await party(booking.bookingId, { guest_count: 4 }, tenant.api_keys.manager);
      const fits = await party(booking.bookingId, { guest_count: 3 }, tenant.api_keys.manager);

      expect([tooMany.status, tooMany.body.error]).toEqual([409, 'capacity_exceeded']);
      expect(fits.status).toBe(200);
      expect(await seatsBooked(booking.slotId)).toBe(3);
      expect(await eventsOf(booking.bookingId, 'booking.party_updated')).toHaveLength(1);
    });

    it('when two bookings grow at once with room for only one of them, then exactly one grows and capacity is never exceeded', async () => {
      const tenant = await seedTenant(t.deps);
      const [a, b] = await Promise.all([
        makeBooking(tenant, { slotIndex: 1, guests: 2 }),
        makeBooking(tenant, { slotIndex: 1, guests: 2 }),
      ]);
      await setCapacity(a.slotId, 7);

      const results = await Promise.all([
        party(a.bookingId, { guest_count: 5 }, tenant.api_keys.manager),
        party(b.bookingId, { guest_count: 5 }, tenant.api_keys.manager),
      ]);

      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(await seatsBooked(a.slotId)).toBe(7);
      const guestCounts = [(await bookingRow(a.bookingId)).guestCount, (await bookingRow(b.bookingId)).guestCount];
      expect(guestCounts.sort()).toEqual([2, 5]);
    });

    it('when a reschedule into a slot races a party increase in it, then capacity is never exceeded', async () => {
      const tenant = await seedTenant(t.deps);
      const [staying, moving] = await Promise.all([
        makeBooking(tenant, { slotIndex: 3, guests: 2 }),
        makeBooking(tenant, { slotIndex: 4, guests: 2 }),
      ]);
      await setCapacity(staying.slotId, 4);

      const [grow, move] = await Promise.all([
        party(staying.bookingId, { guest_count: 4 }, tenant.api_keys.manager),
        reschedule(moving.bookingId, { slot_id: staying.slotId }, { key: tenant.api_keys.manager }),
      ]);

      expect([grow.status, move.status].sort()).toEqual([200, 409]);
      expect(await seatsBooked(staying.slotId)).toBe(4);
    });
  });
});
