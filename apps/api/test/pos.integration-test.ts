import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DemoTenant } from '@booking/db';
import { EVENT_SCHEMA_VERSIONS } from '@booking/events';
import { bearer, createBooking, createTestApp, keyIdOf, seedTenant, type TestApp } from '@booking/test-kit';

interface MadeBooking {
  bookingId: string;
  holdId: string;
  slotId: string;
  guestCount: number;
  totalCents: number;
  giftCardAppliedCents: number;
  customerEmail: string;
}

describe('POS shifts and cash payments', () => {
  let t: TestApp;
  let other: DemoTenant;

  beforeAll(async () => {
    t = createTestApp();
    other = await seedTenant(t.deps);
  });
  afterAll(() => t.close());

  // One open shift per register: tests that open shifts get a tenant of their own.
  const freshTenant = () => seedTenant(t.deps);

  const openShift = (key: string, body: object) =>
    request(t.app).post('/api/pos/shifts/open').set('Authorization', bearer(key)).send(body);
  const closeShift = (key: string, body: object) =>
    request(t.app).post('/api/pos/shifts/close').set('Authorization', bearer(key)).send(body);
  const payCash = (key: string, shiftId: string, body: object) =>
    request(t.app).post(`/api/pos/shifts/${shiftId}/cash-payments`).set('Authorization', bearer(key)).send(body);

  async function openedShift(tenant: DemoTenant, startingCashCents = 10_000): Promise<string> {
    const res = await openShift(tenant.api_keys.staff, { starting_cash_cents: startingCashCents });
    if (res.status !== 201) throw new Error(`open failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.shift_id as string;
  }

  /** A booking of the waiver-free experience; `held` unless the seed's big gift card pays it. */
  async function makeBooking(
    tenant: DemoTenant,
    options: { guests?: number; slotIndex?: number; giftCard?: 'full' | 'partial' } = {},
  ): Promise<MadeBooking> {
    const { giftCard, ...choices } = options;
    const codes = { full: tenant.gift_cards[0]!.code, partial: tenant.gift_cards[1]!.code };
    const booked = await createBooking(t, tenant, {
      ...choices,
      experience: tenant.experiences[1]!,
      ...(giftCard && { giftCardCode: codes[giftCard] }),
    });
    return {
      bookingId: booked.booking_id,
      holdId: booked.holdId,
      slotId: booked.slotId,
      guestCount: booked.guests,
      totalCents: booked.total_cents,
      giftCardAppliedCents: booked.gift_card_applied_cents,
      customerEmail: booked.email,
    };
  }

  const due = (booking: MadeBooking) => booking.totalCents - booking.giftCardAppliedCents;
  const seatsBooked = async (slotId: string) =>
    (await t.deps.db.slot.findUniqueOrThrow({ where: { id: slotId } })).seatsBooked;
  const liveSeats = async (slotId: string) => (await t.deps.holds.liveSeats([slotId])).get(slotId) ?? 0;
  const bookingStatus = async (id: string) => (await t.deps.db.booking.findUniqueOrThrow({ where: { id } })).status;
  const eventsOf = (entityId: string, name: string) =>
    t.deps.db.event.findMany({ where: { entityId, name }, orderBy: { createdAt: 'asc' } });

  describe('POST /api/pos/shifts/open', () => {
    it('when staff open a shift for a venue, then 201 with the shift and shift.opened carries its listed fields', async () => {
      const tenant = await freshTenant();

      const res = await openShift(tenant.api_keys.staff, { starting_cash_cents: 25_000, venue_id: tenant.venue_id });

      expect(res.status).toBe(201);
      const staffKeyId = await keyIdOf(t, tenant.api_keys.staff);
      const shift = await t.deps.db.posShift.findUniqueOrThrow({ where: { id: res.body.shift_id } });
      expect(res.body).toEqual({
        shift_id: shift.id,
        status: 'open',
        venue_id: tenant.venue_id,
        opened_at: shift.openedAt.toISOString(),
        opened_by_user_id: staffKeyId,
        starting_cash_cents: 25_000,
      });
      expect(shift).toMatchObject({ tenantId: tenant.tenant.id, closedAt: null, openedByKeyId: staffKeyId });
      const events = await eventsOf(shift.id, 'shift.opened');
      expect(events).toHaveLength(1);
      expect(events[0]!.tenantId).toBe(tenant.tenant.id);
      expect(events[0]!.entityType).toBe('shift');
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['shift.opened'],
        entity_type: 'shift',
        entity_id: shift.id,
        shift_id: shift.id,
        opened_at: shift.openedAt.toISOString(),
        opened_by_user_id: staffKeyId,
        starting_cash_cents: 25_000,
        venue_id: tenant.venue_id,
      });
    });

    it('when a register already has an open shift, then a second open is 409 shift_already_open, even when they race', async () => {
      const tenant = await freshTenant();

      const racing = await Promise.all(
        Array.from({ length: 4 }, () => openShift(tenant.api_keys.staff, { starting_cash_cents: 0 })),
      );
      const venueRegister = await openShift(tenant.api_keys.manager, {
        starting_cash_cents: 0,
        venue_id: tenant.venue_id,
      });
      const venueAgain = await openShift(tenant.api_keys.staff, { starting_cash_cents: 0, venue_id: tenant.venue_id });

      expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      const opened = racing.find((r) => r.status === 201)!;
      expect(opened.body.venue_id).toBeNull();
      expect(racing.find((r) => r.status === 409)!.body).toEqual({
        error: 'shift_already_open',
        detail: { shift_id: opened.body.shift_id },
      });
      // The venue's register is another register.
      expect(venueRegister.status).toBe(201);
      expect([venueAgain.status, venueAgain.body.error]).toEqual([409, 'shift_already_open']);
      expect(await t.deps.db.posShift.count({ where: { tenantId: tenant.tenant.id, closedAt: null } })).toBe(2);
      const events = await eventsOf(opened.body.shift_id, 'shift.opened');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ venue_id: null, starting_cash_cents: 0 });
    });

    it("when the venue is another tenant's or the body is invalid, then 404 venue_not_found or 400 invalid_body; without a key 401", async () => {
      const tenant = await freshTenant();
      const key = tenant.api_keys.staff;

      const results = await Promise.all([
        openShift(key, { starting_cash_cents: 100, venue_id: other.venue_id }),
        openShift(key, { starting_cash_cents: -1 }),
        openShift(key, { starting_cash_cents: 10_000_001 }),
        openShift(key, { starting_cash_cents: 12.5 }),
        openShift(key, {}),
        openShift(key, { starting_cash_cents: 100, venue_id: 'harbourside' }),
        openShift(key, { starting_cash_cents: 100, till: 3 }),
        request(t.app).post('/api/pos/shifts/open').send({ starting_cash_cents: 100 }),
      ]);

      expect(results.map((r) => [r.status, r.body.error])).toEqual([
        [404, 'venue_not_found'],
        [400, 'invalid_body'],
        [400, 'invalid_body'],
        [400, 'invalid_body'],
        [400, 'invalid_body'],
        [400, 'invalid_body'],
        [400, 'invalid_body'],
        [401, 'unauthorized'],
      ]);
      expect(await t.deps.db.posShift.count({ where: { tenantId: tenant.tenant.id } })).toBe(0);
    });
  });

  describe('POST /api/pos/shifts/{id}/cash-payments', () => {
    it('when staff take the amount due for a held booking, then it is confirmed by cash, its seats move into seats_booked and booking.confirmed says method cash', async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant);
      const booking = await makeBooking(tenant, { guests: 3 });
      const seatsBefore = await seatsBooked(booking.slotId);
      const liveBefore = await liveSeats(booking.slotId);
      expect(liveBefore).toBe(3);

      const res = await payCash(tenant.api_keys.staff, shiftId, {
        booking_id: booking.bookingId,
        amount_cents: booking.totalCents,
      });

      expect(res.status).toBe(200);
      const payments = await t.deps.db.payment.findMany({ where: { bookingId: booking.bookingId } });
      expect(payments).toHaveLength(1);
      expect(payments[0]).toMatchObject({
        method: 'cash',
        amountCents: booking.totalCents,
        currency: 'USD',
        status: 'succeeded',
        shiftId,
        tenantId: tenant.tenant.id,
      });
      expect(res.body).toEqual({
        booking_id: booking.bookingId,
        status: 'confirmed',
        payment_id: payments[0]!.id,
        shift_id: shiftId,
        amount_cents: booking.totalCents,
        currency: 'USD',
      });
      expect(await bookingStatus(booking.bookingId)).toBe('confirmed');
      expect(await seatsBooked(booking.slotId)).toBe(seatsBefore + 3);
      expect(await liveSeats(booking.slotId)).toBe(0);
      expect((await t.deps.holds.read(booking.holdId)).hold).toBeNull();

      const events = await eventsOf(booking.bookingId, 'booking.confirmed');
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['booking.confirmed'],
        entity_type: 'booking',
        entity_id: booking.bookingId,
        booking_id: booking.bookingId,
        experience_id: tenant.experiences[1]!.id,
        venue_id: tenant.venue_id,
        slot_id: booking.slotId,
        customer_email: booking.customerEmail,
        order_id: booking.bookingId,
        is_primary_booking: true,
        charge_amount_cents: booking.totalCents,
        currency: 'USD',
        method: 'cash',
        net_paid_cents: booking.totalCents,
      });
    });

    it('when a gift card paid part of the booking, then cash pays the rest and net_paid_cents counts both', async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant);
      const booking = await makeBooking(tenant, { giftCard: 'partial' });
      expect(booking.giftCardAppliedCents).toBe(500);

      const res = await payCash(tenant.api_keys.manager, shiftId, {
        booking_id: booking.bookingId,
        amount_cents: due(booking),
      });

      expect(res.status).toBe(200);
      expect(res.body.amount_cents).toBe(booking.totalCents - 500);
      const [event] = await eventsOf(booking.bookingId, 'booking.confirmed');
      expect(event!.data).toMatchObject({ method: 'cash', net_paid_cents: booking.totalCents });
    });

    it('when the amount is not what is due, then 400 payment_amount_mismatch names the amount due and nothing changes', async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant);
      const booking = await makeBooking(tenant);

      const short = await payCash(tenant.api_keys.staff, shiftId, {
        booking_id: booking.bookingId,
        amount_cents: booking.totalCents - 1,
      });
      const invalid = await payCash(tenant.api_keys.staff, shiftId, { booking_id: booking.bookingId, amount_cents: 0 });

      expect(short.status).toBe(400);
      expect(short.body).toEqual({
        error: 'payment_amount_mismatch',
        detail: { amount_due_cents: booking.totalCents, currency: 'USD' },
      });
      expect([invalid.status, invalid.body.error]).toEqual([400, 'invalid_body']);
      expect(await bookingStatus(booking.bookingId)).toBe('held');
      expect(await t.deps.db.payment.count({ where: { bookingId: booking.bookingId } })).toBe(0);
      expect(await eventsOf(booking.bookingId, 'booking.confirmed')).toHaveLength(0);
    });

    it('when the booking is already confirmed, or paid twice at once, then 409 booking_not_payable and one payment only', async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant);
      const confirmed = await makeBooking(tenant, { giftCard: 'full' });
      const held = await makeBooking(tenant, { slotIndex: 1 });

      const paidAlready = await payCash(tenant.api_keys.staff, shiftId, {
        booking_id: confirmed.bookingId,
        amount_cents: confirmed.totalCents,
      });
      const racing = await Promise.all(
        Array.from({ length: 3 }, () =>
          payCash(tenant.api_keys.staff, shiftId, { booking_id: held.bookingId, amount_cents: held.totalCents }),
        ),
      );

      expect(paidAlready.status).toBe(409);
      expect(paidAlready.body).toEqual({ error: 'booking_not_payable', detail: 'the booking is confirmed' });
      expect(await t.deps.db.payment.count({ where: { bookingId: confirmed.bookingId, method: 'cash' } })).toBe(0);
      expect(racing.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      expect(await t.deps.db.payment.count({ where: { bookingId: held.bookingId } })).toBe(1);
      expect(await eventsOf(held.bookingId, 'booking.confirmed')).toHaveLength(1);
    });

    it("when the booking's seats were sold after its hold lapsed, then 409 capacity_exceeded and nothing is recorded", async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant);
      const booking = await makeBooking(tenant, { slotIndex: 3 });
      // The hold lapses (its seats stop counting) and others take every seat of the slot.
      await t.deps.holds.release(booking.slotId, booking.holdId, booking.guestCount);
      const slot = await t.deps.db.slot.findUniqueOrThrow({ where: { id: booking.slotId } });
      await t.deps.db.slot.update({ where: { id: slot.id }, data: { seatsBooked: slot.capacity } });

      const res = await payCash(tenant.api_keys.staff, shiftId, {
        booking_id: booking.bookingId,
        amount_cents: booking.totalCents,
      });

      expect([res.status, res.body.error]).toEqual([409, 'capacity_exceeded']);
      expect(await bookingStatus(booking.bookingId)).toBe('held');
      expect(await seatsBooked(booking.slotId)).toBe(slot.capacity);
      expect(await t.deps.db.payment.count({ where: { bookingId: booking.bookingId } })).toBe(0);
      expect(await eventsOf(booking.bookingId, 'booking.confirmed')).toHaveLength(0);
    });

    it("when the shift is closed, unknown or another tenant's, or the booking is another tenant's, then 409 shift_closed or 404", async () => {
      const tenant = await freshTenant();
      const closedShift = await openedShift(tenant);
      expect(
        (await closeShift(tenant.api_keys.manager, { shift_id: closedShift, counted_cash_cents: 10_000 })).status,
      ).toBe(200);
      const openShiftId = await openedShift(tenant);
      const booking = await makeBooking(tenant);
      const foreignBooking = await makeBooking(other);
      const body = { booking_id: booking.bookingId, amount_cents: booking.totalCents };

      const results = await Promise.all([
        payCash(tenant.api_keys.staff, closedShift, body),
        payCash(tenant.api_keys.staff, randomUUID(), body),
        payCash(tenant.api_keys.staff, 'till-1', body),
        payCash(other.api_keys.manager, openShiftId, body),
        payCash(tenant.api_keys.staff, openShiftId, {
          booking_id: foreignBooking.bookingId,
          amount_cents: foreignBooking.totalCents,
        }),
        request(t.app).post(`/api/pos/shifts/${openShiftId}/cash-payments`).send(body),
      ]);

      expect(results.map((r) => [r.status, r.body.error])).toEqual([
        [409, 'shift_closed'],
        [404, 'shift_not_found'],
        [404, 'shift_not_found'],
        [404, 'shift_not_found'],
        [404, 'booking_not_found'],
        [401, 'unauthorized'],
      ]);
      expect(await bookingStatus(booking.bookingId)).toBe('held');
      expect(await bookingStatus(foreignBooking.bookingId)).toBe('held');
      expect(await t.deps.db.payment.count({ where: { shiftId: { in: [closedShift, openShiftId] } } })).toBe(0);
    });
  });

  describe('POST /api/pos/shifts/close', () => {
    /** A cash gift card sale in the shift, as the gift card sale route records one. */
    async function cashGiftCardSale(tenant: DemoTenant, shiftId: string, amountCents: number) {
      const card = await t.deps.db.giftCard.create({
        data: {
          tenantId: tenant.tenant.id,
          codeHash: randomUUID(),
          codeLast4: 'TEST',
          currency: 'USD',
          balanceCents: amountCents,
          initialBalanceCents: amountCents,
        },
      });
      await t.deps.db.giftCardSale.create({
        data: {
          tenantId: tenant.tenant.id,
          giftCardId: card.id,
          amountCents,
          currency: 'USD',
          method: 'cash',
          shiftId,
        },
      });
    }

    it('when a manager closes with more cash than expected, then collected counts the cash taken, the variance is positive and shift.closed carries every listed field', async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant, 10_000);
      const first = await makeBooking(tenant, { guests: 2 });
      const second = await makeBooking(tenant, { guests: 3, slotIndex: 1, giftCard: 'partial' });
      // Not cash: paid by gift card in full, outside the drawer.
      await makeBooking(tenant, { slotIndex: 2, giftCard: 'full' });
      for (const booking of [first, second]) {
        const paid = await payCash(tenant.api_keys.staff, shiftId, {
          booking_id: booking.bookingId,
          amount_cents: due(booking),
        });
        expect(paid.status).toBe(200);
      }
      await cashGiftCardSale(tenant, shiftId, 5_000);
      const collected = due(first) + due(second) + 5_000;
      const expected = 10_000 + collected;

      const res = await closeShift(tenant.api_keys.manager, { shift_id: shiftId, counted_cash_cents: expected + 150 });

      expect(res.status).toBe(200);
      const shift = await t.deps.db.posShift.findUniqueOrThrow({ where: { id: shiftId } });
      const managerKeyId = await keyIdOf(t, tenant.api_keys.manager);
      expect(res.body).toEqual({
        shift_id: shiftId,
        status: 'closed',
        venue_id: null,
        opened_at: shift.openedAt.toISOString(),
        closed_at: shift.closedAt!.toISOString(),
        opened_by_user_id: await keyIdOf(t, tenant.api_keys.staff),
        closed_by_user_id: managerKeyId,
        starting_cash_cents: 10_000,
        collected_cash_cents: collected,
        expected_cash_cents: expected,
        ending_cash_cents: expected + 150,
        variance_cents: 150,
      });
      expect(shift).toMatchObject({
        closedByKeyId: managerKeyId,
        endingCashCents: expected + 150,
        expectedCashCents: expected,
        varianceCents: 150,
      });
      const events = await eventsOf(shiftId, 'shift.closed');
      expect(events).toHaveLength(1);
      expect(events[0]!.tenantId).toBe(tenant.tenant.id);
      expect(events[0]!.data).toEqual({
        event_id: events[0]!.id,
        schema_version: EVENT_SCHEMA_VERSIONS['shift.closed'],
        entity_type: 'shift',
        entity_id: shiftId,
        shift_id: shiftId,
        opened_at: shift.openedAt.toISOString(),
        closed_at: shift.closedAt!.toISOString(),
        closed_by_user_id: managerKeyId,
        starting_cash_cents: 10_000,
        collected_cash_cents: collected,
        expected_cash_cents: expected,
        ending_cash_cents: expected + 150,
        variance_cents: 150,
      });
    });

    it('when the drawer is short, then the variance is negative; a closed register can open again', async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant, 2_000);
      const booking = await makeBooking(tenant);
      expect(
        (await payCash(tenant.api_keys.staff, shiftId, { booking_id: booking.bookingId, amount_cents: due(booking) }))
          .status,
      ).toBe(200);
      const expected = 2_000 + due(booking);

      const res = await closeShift(tenant.api_keys.admin, { shift_id: shiftId, counted_cash_cents: expected - 300 });
      const reopened = await openShift(tenant.api_keys.staff, { starting_cash_cents: 0 });

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        collected_cash_cents: due(booking),
        expected_cash_cents: expected,
        ending_cash_cents: expected - 300,
        variance_cents: -300,
      });
      const [event] = await eventsOf(shiftId, 'shift.closed');
      expect(event!.data).toMatchObject({
        variance_cents: -300,
        closed_by_user_id: await keyIdOf(t, tenant.api_keys.admin),
      });
      expect(reopened.status).toBe(201);
    });

    it('when staff try to close, then 403; when closing twice, then 409 shift_closed with one shift.closed', async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant, 500);

      const byStaff = await closeShift(tenant.api_keys.staff, { shift_id: shiftId, counted_cash_cents: 500 });
      const closings = await Promise.all(
        Array.from({ length: 3 }, () =>
          closeShift(tenant.api_keys.manager, { shift_id: shiftId, counted_cash_cents: 500 }),
        ),
      );

      expect([byStaff.status, byStaff.body.error]).toEqual([403, 'forbidden']);
      expect(closings.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      expect(closings.find((r) => r.status === 409)!.body.error).toBe('shift_closed');
      expect(closings.find((r) => r.status === 200)!.body).toMatchObject({
        variance_cents: 0,
        collected_cash_cents: 0,
      });
      expect(await eventsOf(shiftId, 'shift.closed')).toHaveLength(1);
    });

    it("when the shift is unknown or another tenant's, or the body is invalid, then 404 shift_not_found or 400", async () => {
      const tenant = await freshTenant();
      const shiftId = await openedShift(tenant);

      const results = await Promise.all([
        closeShift(other.api_keys.manager, { shift_id: shiftId, counted_cash_cents: 0 }),
        closeShift(tenant.api_keys.manager, { shift_id: randomUUID(), counted_cash_cents: 0 }),
        closeShift(tenant.api_keys.manager, { shift_id: shiftId, counted_cash_cents: -5 }),
        closeShift(tenant.api_keys.manager, { shift_id: shiftId }),
        closeShift(tenant.api_keys.manager, { shift_id: 'x', counted_cash_cents: 0 }),
      ]);

      expect(results.map((r) => [r.status, r.body.error])).toEqual([
        [404, 'shift_not_found'],
        [404, 'shift_not_found'],
        [400, 'invalid_body'],
        [400, 'invalid_body'],
        [400, 'invalid_body'],
      ]);
      expect((await t.deps.db.posShift.findUniqueOrThrow({ where: { id: shiftId } })).closedAt).toBeNull();
      expect(await eventsOf(shiftId, 'shift.closed')).toHaveLength(0);
    });
  });
});
