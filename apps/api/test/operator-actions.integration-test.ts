import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS } from '@booking/events';
import { signToken, verifyToken } from '@booking/signing';
import {
  bearer,
  confirmedBooking,
  createTestApp,
  type Experience,
  heldBooking,
  keyIdOf,
  seedTenant,
  sleep,
  type TestApp,
} from '@booking/test-kit';

interface MadeBooking {
  bookingId: string;
  holdId: string;
  slotId: string;
  guestCount: number;
  bookingToken: string;
  totalCents: number;
}

describe('operator actions on bookings', () => {
  let t: TestApp;
  let demo: DemoTenant;
  let other: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    [demo, other] = await Promise.all([seedTenant(t.deps), seedTenant(t.deps)]);
  });
  afterAll(() => t.close());

  /** A booking through the kit's factory; with `confirmed`, the seed's big gift card pays it in full. */
  async function makeBooking(
    tenant: DemoTenant,
    options: {
      confirmed: boolean;
      experience?: Experience;
      slotIndex?: number;
      guests?: number;
      extra?: Record<string, unknown>;
    },
  ): Promise<MadeBooking> {
    const { confirmed, extra, ...choices } = options;
    const booked = await (confirmed ? confirmedBooking : heldBooking)(t, tenant, { ...choices, body: extra });
    return {
      bookingId: booked.booking_id,
      holdId: booked.holdId,
      slotId: booked.slotId,
      guestCount: booked.guests,
      bookingToken: booked.booking_token,
      totalCents: booked.total_cents,
    };
  }

  const seatsBooked = async (slotId: string) =>
    (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
  const liveSeats = async (slotId: string) => (await t.deps.holds.liveSeats([slotId])).get(slotId) ?? 0;
  const eventsOf = (bookingId: string, name: string) =>
    t.deps.db.event.findMany({ where: { entityId: bookingId, name }, orderBy: { createdAt: 'asc' } });

  describe('POST /api/bookings/{id}/cancel', () => {
    const cancel = (id: string, key: string) =>
      request(t.app).post(`/api/bookings/${id}/cancel`).set('Authorization', bearer(key));

    it('when a manager cancels a confirmed booking, then it is cancelled, its seats return to the slot, booking.cancelled is recorded and nothing is refunded', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 1, guests: 3 });
      const seatsBefore = await seatsBooked(booking.slotId);
      const paymentsBefore = await t.deps.db.payment.findMany({
        where: { bookingId: booking.bookingId },
        orderBy: { createdAt: 'asc' },
      });
      const cardBefore = await t.deps.db.giftCard.findMany({
        where: { tenantId: demo.tenant.id },
        orderBy: { balanceCents: 'asc' },
      });
      expect(paymentsBefore).toHaveLength(1);

      const res = await cancel(booking.bookingId, demo.api_keys.manager);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ booking_id: booking.bookingId, status: 'cancelled' });
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).status).toBe(
        'cancelled',
      );
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 3);
      // No refund: the payments and the gift card balance are as they were.
      expect(
        await t.deps.db.payment.findMany({ where: { bookingId: booking.bookingId }, orderBy: { createdAt: 'asc' } }),
      ).toEqual(paymentsBefore);
      expect(
        await t.deps.db.giftCard.findMany({ where: { tenantId: demo.tenant.id }, orderBy: { balanceCents: 'asc' } }),
      ).toEqual(cardBefore);

      const events = await eventsOf(booking.bookingId, 'booking.cancelled');
      const row = await t.deps.db.booking.findUniqueOrThrow({
        where: { id: booking.bookingId },
        include: { customer: true },
      });
      expect(events).toHaveLength(1);
      expect(events[0]!.tenantId).toBe(demo.tenant.id);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['booking.cancelled'],
        entity_type: 'booking',
        entity_id: booking.bookingId,
        booking_id: booking.bookingId,
        experience_id: row.experienceId,
        venue_id: row.venueId,
        slot_id: row.slotId,
        customer_email: row.customer.email,
        cancelled_by_user_id: await keyIdOf(t, demo.api_keys.manager),
      });
    });

    it('when an admin cancels a held booking, then its hold is released and the slot count is untouched', async () => {
      const booking = await makeBooking(demo, { confirmed: false, slotIndex: 2, guests: 4 });
      const liveBefore = await liveSeats(booking.slotId);
      const seatsBefore = await seatsBooked(booking.slotId);
      expect(liveBefore).toBeGreaterThanOrEqual(4);

      const res = await cancel(booking.bookingId, demo.api_keys.admin);

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ booking_id: booking.bookingId, status: 'cancelled' });
      expect(await liveSeats(booking.slotId)).toBe(liveBefore - 4);
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore);
      expect((await t.deps.holds.read(booking.holdId)).hold).toBeNull();
      expect(await t.deps.db.payment.count({ where: { bookingId: booking.bookingId } })).toBe(0);
      const events = await eventsOf(booking.bookingId, 'booking.cancelled');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({
        booking_id: booking.bookingId,
        cancelled_by_user_id: await keyIdOf(t, demo.api_keys.admin),
      });
    });

    it('when managers cancel the same booking at once, then it is cancelled once and its seats return once', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 1, guests: 2 });
      const seatsBefore = await seatsBooked(booking.slotId);

      const results = await Promise.all(
        Array.from({ length: 4 }, () => cancel(booking.bookingId, demo.api_keys.manager)),
      );

      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore - 2);
      expect(await eventsOf(booking.bookingId, 'booking.cancelled')).toHaveLength(1);
    });

    it('when the booking is already cancelled, then it is 409 booking_not_cancellable and nothing more happens', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 1, guests: 1 });
      await cancel(booking.bookingId, demo.api_keys.manager).expect(200);
      const seatsAfterFirst = await seatsBooked(booking.slotId);

      const res = await cancel(booking.bookingId, demo.api_keys.manager);

      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'booking_not_cancellable', detail: expect.any(String) });
      expect(await seatsBooked(booking.slotId)).toBe(seatsAfterFirst);
      expect(await eventsOf(booking.bookingId, 'booking.cancelled')).toHaveLength(1);
    });

    it("when the booking is another tenant's, then it is 404 booking_not_found and the booking is untouched", async () => {
      const booking = await makeBooking(other, { confirmed: true });
      const seatsBefore = await seatsBooked(booking.slotId);

      const res = await cancel(booking.bookingId, demo.api_keys.admin);

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'booking_not_found' });
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).status).toBe(
        'confirmed',
      );
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore);
      expect(await eventsOf(booking.bookingId, 'booking.cancelled')).toHaveLength(0);
    });

    it('when the id is not a uuid or names no booking, then it is 404 booking_not_found', async () => {
      for (const id of [
        'not-a-uuid',
        '123',
        '00000000-0000-4000-8000-00000000000z',
        '00000000-0000-4000-8000-000000000004',
      ]) {
        const res = await cancel(id, demo.api_keys.manager);

        expect({ id, status: res.status, body: res.body }).toEqual({
          id,
          status: 404,
          body: { error: 'booking_not_found' },
        });
      }
    });

    it('when a staff key cancels, then it is 403 forbidden', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 1, guests: 1 });

      const res = await cancel(booking.bookingId, demo.api_keys.staff);

      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).status).toBe(
        'confirmed',
      );
    });
  });

  describe('POST /api/bookings/{id}/check-in', () => {
    const checkIn = (id: string, key: string) =>
      request(t.app).post(`/api/bookings/${id}/check-in`).set('Authorization', bearer(key));

    it('when a confirmed booking is checked in twice, then checked_in_at is set once and one booking.checked_in is recorded', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 3 });
      const before = Date.now();

      const first = await checkIn(booking.bookingId, demo.api_keys.staff);
      const second = await checkIn(booking.bookingId, demo.api_keys.manager);

      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        booking_id: booking.bookingId,
        checked_in_at: expect.any(String),
        already_checked_in: false,
      });
      expect(new Date(first.body.checked_in_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
      expect(second.status).toBe(200);
      expect(second.body).toEqual({
        booking_id: booking.bookingId,
        checked_in_at: first.body.checked_in_at,
        already_checked_in: true,
      });

      const stored = await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } });
      expect(stored.status).toBe('confirmed');
      expect(stored.checkedInAt?.toISOString()).toBe(first.body.checked_in_at);
      const events = await eventsOf(booking.bookingId, 'booking.checked_in');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({
        event_id: events[0]!.id,
        entity_type: 'booking',
        entity_id: booking.bookingId,
        booking_id: booking.bookingId,
        checked_in_at: first.body.checked_in_at,
      });
    });

    it('when staff check the same booking in at once, then exactly one check-in happens', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 3, guests: 1 });

      const results = await Promise.all(
        Array.from({ length: 5 }, () => checkIn(booking.bookingId, demo.api_keys.staff)),
      );

      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(results.filter((r) => r.body.already_checked_in === false)).toHaveLength(1);
      expect(new Set(results.map((r) => r.body.checked_in_at)).size).toBe(1);
      expect(await eventsOf(booking.bookingId, 'booking.checked_in')).toHaveLength(1);
    });

    it('when the booking is held, then it is 409 booking_not_checkable', async () => {
      const booking = await makeBooking(demo, { confirmed: false, slotIndex: 3, guests: 1 });

      const res = await checkIn(booking.bookingId, demo.api_keys.staff);

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('booking_not_checkable');
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).checkedInAt).toBeNull();
      expect(await eventsOf(booking.bookingId, 'booking.checked_in')).toHaveLength(0);
    });

    it('when the booking is cancelled, then it is 409 booking_not_checkable', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 3, guests: 1 });
      await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/cancel`)
        .set('Authorization', bearer(demo.api_keys.manager))
        .expect(200);

      const res = await checkIn(booking.bookingId, demo.api_keys.staff);

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('booking_not_checkable');
    });

    it("when the booking is another tenant's or the id is not a uuid, then it is 404 booking_not_found", async () => {
      const booking = await makeBooking(other, { confirmed: true, slotIndex: 3 });

      const foreign = await checkIn(booking.bookingId, demo.api_keys.admin);
      const garbage = await checkIn('nope', demo.api_keys.staff);

      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ error: 'booking_not_found' });
      expect(garbage.status).toBe(404);
      expect(garbage.body).toEqual({ error: 'booking_not_found' });
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).checkedInAt).toBeNull();
    });
  });

  describe('POST /api/bookings/check-in-by-token', () => {
    const byToken = (body: object, key = demo.api_keys.staff) =>
      request(t.app).post('/api/bookings/check-in-by-token').set('Authorization', bearer(key)).send(body);
    const checkInTokenOf = async (tenant: DemoTenant, bookingId: string) => {
      const res = await request(t.app)
        .get(`/api/bookings/${bookingId}`)
        .set('Authorization', bearer(tenant.api_keys.staff))
        .expect(200);
      return res.body.check_in_token as string;
    };

    it('when the token comes from the booking, then it checks in, and a repeat answers already_checked_in', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 4 });
      const token = await checkInTokenOf(demo, booking.bookingId);

      const first = await byToken({ token });
      const second = await byToken({ token });

      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        booking_id: booking.bookingId,
        checked_in_at: expect.any(String),
        already_checked_in: false,
      });
      expect(second.status).toBe(200);
      expect(second.body).toEqual({
        booking_id: booking.bookingId,
        checked_in_at: first.body.checked_in_at,
        already_checked_in: true,
      });
      expect(await eventsOf(booking.bookingId, 'booking.checked_in')).toHaveLength(1);
    });

    it('when the token is tampered with, then it is 401 invalid_token', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 4 });
      const victim = await makeBooking(demo, { confirmed: true, slotIndex: 4, guests: 1 });
      const token = await checkInTokenOf(demo, booking.bookingId);
      const [version, payload, signature] = token.split('.') as [string, string, string];
      // The claims swapped for another booking's, the signature kept.
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      const forgedPayload = Buffer.from(JSON.stringify({ ...claims, sub: victim.bookingId })).toString('base64url');
      const middle = Math.floor(signature.length / 2);
      const flipped =
        signature.slice(0, middle) + (signature[middle] === 'A' ? 'B' : 'A') + signature.slice(middle + 1);

      for (const tampered of [
        `${version}.${forgedPayload}.${signature}`,
        `${version}.${payload}.${flipped}`,
        `${version}.${payload}`,
        'garbage',
        `t2.${payload}.${signature}`,
      ]) {
        const res = await byToken({ token: tampered });

        expect({ tampered, status: res.status, error: res.body.error }).toEqual({
          tampered,
          status: 401,
          error: 'invalid_token',
        });
      }
      for (const id of [booking.bookingId, victim.bookingId]) {
        expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id } })).checkedInAt).toBeNull();
      }
    });

    it('when the token has expired, then it is 401 invalid_token', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 4, guests: 1 });
      // A one-second token issued five seconds ago: expired without the test having to wait.
      const token = signToken(t.deps.config.tokenSigningSecret, 'check_in', {
        subject: booking.bookingId,
        tenantId: demo.tenant.id,
        ttlSeconds: 1,
        now: new Date(Date.now() - 5_000),
      });

      const res = await byToken({ token });

      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).checkedInAt).toBeNull();
    });

    it('when the token expires while it is waited on, then it is 401 invalid_token', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 4, guests: 1 });
      const token = signToken(t.deps.config.tokenSigningSecret, 'check_in', {
        subject: booking.bookingId,
        tenantId: demo.tenant.id,
        ttlSeconds: 1,
      });
      const expiresAt = verifyToken(t.deps.config.tokenSigningSecret, 'check_in', token).expiresAt.getTime();
      // A token's expiry is only a time, with nothing to wait on: let it pass (at most a second,
      // since the expiry is whole seconds).
      await sleep(Math.min(2_000, Math.max(0, expiresAt - Date.now() + 50)));

      const res = await byToken({ token });

      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
    });

    it('when a booking token is presented instead of a check-in token, then it is 401 invalid_token', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 4, guests: 1 });

      const res = await byToken({ token: booking.bookingToken });

      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).checkedInAt).toBeNull();
    });

    it("when the token is of another tenant's booking, then it is 404 booking_not_found and that booking stays unchecked", async () => {
      const booking = await makeBooking(other, { confirmed: true, slotIndex: 4 });
      const token = await checkInTokenOf(other, booking.bookingId);

      const res = await byToken({ token }, demo.api_keys.admin);

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'booking_not_found' });
      expect((await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).checkedInAt).toBeNull();
    });

    it('when a genuine token names no booking, then it is 404 booking_not_found', async () => {
      const token = signToken(t.deps.config.tokenSigningSecret, 'check_in', {
        subject: '00000000-0000-4000-8000-000000000005',
        tenantId: demo.tenant.id,
        ttlSeconds: 600,
      });

      const res = await byToken({ token });

      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'booking_not_found' });
    });

    it('when the booking is held, then it is 409 booking_not_checkable', async () => {
      const booking = await makeBooking(demo, { confirmed: false, slotIndex: 4, guests: 1 });
      const token = await checkInTokenOf(demo, booking.bookingId);

      const res = await byToken({ token });

      expect(res.status).toBe(409);
      expect(res.body.error).toBe('booking_not_checkable');
    });

    it('when the token field is missing or not a string, then it is 400 invalid_body', async () => {
      for (const body of [{}, { token: '' }, { token: 42 }, { tok: 'x' }]) {
        const res = await byToken(body);

        expect({ body, status: res.status, error: res.body.error }).toEqual({
          body,
          status: 400,
          error: 'invalid_body',
        });
      }
    });

    it('when there is no API key, then it is 401 unauthorized', async () => {
      const res = await request(t.app).post('/api/bookings/check-in-by-token').send({ token: 'x' });

      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    });
  });

  describe('GET /api/bookings/{id} and /qr.svg', () => {
    const get = (path: string, key = demo.api_keys.staff) => request(t.app).get(path).set('Authorization', bearer(key));
    const getSvg = (path: string, key = demo.api_keys.staff) =>
      get(path, key)
        .buffer(true)
        .parse((res, done) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => done(null, text));
        });

    it('when a staff key asks for a booking, then it sees status, slot, experience, party, contact, totals, payments and its check-in token', async () => {
      const experience = demo.experiences[0]!;
      const slot = experience.slots[5]!;
      const dryBag = experience.addons[0]!;
      const booking = await makeBooking(demo, {
        confirmed: true,
        slotIndex: 5,
        guests: 2,
        extra: { notes: 'Window seats please', addons: [{ addon_id: dryBag.id, qty: 2 }] },
      });

      const res = await get(`/api/bookings/${booking.bookingId}`);

      expect(res.status).toBe(200);
      const total = experience.base_price_cents * 2 + dryBag.price_cents * 2;
      expect(res.body).toMatchObject({
        booking_id: booking.bookingId,
        status: 'confirmed',
        experience: { id: experience.id, slug: experience.slug, name: expect.any(String) },
        slot: { id: slot.id, starts_at: slot.starts_at, ends_at: expect.any(String) },
        venue_id: demo.venue_id,
        guest_count: 2,
        customer: {
          id: expect.any(String),
          email: `guest-${booking.holdId.slice(-12)}@example.com`,
          first_name: 'Ada',
          last_name: 'Lovelace',
        },
        notes: 'Window seats please',
        currency: 'USD',
        unit_price_cents: experience.base_price_cents,
        addons: [{ addon_id: dryBag.id, qty: 2, unit_price_cents: dryBag.price_cents }],
        total_cents: total,
        gift_card_applied_cents: total,
        paid_cents: total,
        payments: [
          {
            id: expect.any(String),
            method: 'gift_card',
            amount_cents: total,
            status: 'succeeded',
            created_at: expect.any(String),
          },
        ],
        checked_in_at: null,
        check_in_token: expect.any(String),
      });
      expect(booking.totalCents).toBe(total);
      const claims = verifyToken(t.deps.config.tokenSigningSecret, 'check_in', res.body.check_in_token);
      expect(claims).toMatchObject({ subject: booking.bookingId, tenantId: demo.tenant.id });
      // Valid through the visit.
      expect(claims.expiresAt.getTime()).toBeGreaterThan(new Date(res.body.slot.ends_at).getTime());
      expect(JSON.stringify(res.body)).not.toMatch(/secret|hash/i);

      await request(t.app)
        .post(`/api/bookings/${booking.bookingId}/check-in`)
        .set('Authorization', bearer(demo.api_keys.staff))
        .expect(200);
      const after = await get(`/api/bookings/${booking.bookingId}`);
      expect(after.body.checked_in_at).toBe(
        (await t.deps.db.booking.findUniqueOrThrow({ where: { id: booking.bookingId } })).checkedInAt!.toISOString(),
      );
    });

    it('when a held booking is asked for, then it shows no payments yet', async () => {
      const booking = await makeBooking(demo, { confirmed: false, slotIndex: 5, guests: 1 });

      const res = await get(`/api/bookings/${booking.bookingId}`, demo.api_keys.manager);

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        status: 'held',
        guest_count: 1,
        payments: [],
        paid_cents: 0,
        gift_card_applied_cents: 0,
      });
    });

    it('when the QR code is asked for, then it is an SVG image', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 5, guests: 1 });

      const res = await getSvg(`/api/bookings/${booking.bookingId}/qr.svg`);

      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
      expect(res.body).toContain('<svg');
      expect(res.body).toContain('</svg>');
    });

    it("when the booking is another tenant's, then both are 404 booking_not_found", async () => {
      const booking = await makeBooking(other, { confirmed: true, slotIndex: 5 });

      const json = await get(`/api/bookings/${booking.bookingId}`, demo.api_keys.admin);
      const svg = await get(`/api/bookings/${booking.bookingId}/qr.svg`, demo.api_keys.admin);
      const garbage = await get('/api/bookings/not-a-uuid/qr.svg');

      for (const res of [json, svg, garbage]) {
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 'booking_not_found' });
      }
      await get(`/api/bookings/${booking.bookingId}`, other.api_keys.staff).expect(200);
    });

    it('when there is no valid key, then both are 401 unauthorized', async () => {
      const booking = await makeBooking(demo, { confirmed: true, slotIndex: 5, guests: 1 });

      for (const path of [`/api/bookings/${booking.bookingId}`, `/api/bookings/${booking.bookingId}/qr.svg`]) {
        const res = await request(t.app).get(path);

        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'unauthorized' });
      }
    });
  });
});
