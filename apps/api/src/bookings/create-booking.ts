import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import { Prisma, type Db } from '@booking/db';
import { AppError, priceBooking } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { signToken } from '@booking/signing';
import type { Hold, HoldStore } from '../holds/hold-store';
import type { BookingRequest, BookingResponse } from './booking-schemas';
import { resolveAddons } from './resolve-addons';

type Deps = { db: Db; holds: HoldStore; config: Config };

/** Checks the request against its hold; returns the live hold. */
async function loadHold(holds: HoldStore, request: BookingRequest): Promise<Hold> {
  const hold = await holds.get(request.hold_id);
  if (!hold) throw new AppError('hold_not_found');
  if (hold.slotId !== request.slot_id || hold.experienceId !== request.experience_id) {
    throw new AppError('experience_slot_mismatch', 'slot_id and experience_id must be those of the hold');
  }
  if (hold.expiresAt <= (await holds.now())) throw new AppError('hold_expired');
  return hold;
}

/**
 * Turns a live hold into a booking with status `held`.
 *
 * Capacity is decided again inside the transaction, under the slot row's lock: booked seats +
 * this booking + every other live hold must fit. Holds and bookings on the same slot queue on
 * that lock, so replicas racing for the last seats cannot oversell. The hold is consumed exactly
 * once: a second conversion finds the first booking under the lock (and bookings.hold_id is
 * unique besides).
 */
export async function createBooking(deps: Deps, request: BookingRequest): Promise<BookingResponse> {
  const hold = await loadHold(deps.holds, request);
  const experience = await deps.db.experience.findUniqueOrThrow({
    where: { id: hold.experienceId },
    include: { slots: { where: { id: hold.slotId } } },
  });
  const slot = experience.slots[0]!;
  if (experience.venueId !== request.venue_id) {
    throw new AppError('experience_slot_mismatch', 'venue_id is not the venue of the experience');
  }
  if (request.guest_count < experience.minPartySize || request.guest_count > Math.min(experience.maxPartySize, hold.seats)) {
    throw new AppError('invalid_guest_count', {
      min_party_size: experience.minPartySize,
      max_party_size: experience.maxPartySize,
      seats_held: hold.seats,
    });
  }
  const addons = await resolveAddons(deps.db, { tenantId: hold.tenantId, experienceId: experience.id }, request.addons ?? []);
  const price = priceBooking({
    basePriceCents: experience.basePriceCents,
    slotPriceCents: slot.priceCents,
    guestCount: request.guest_count,
    addons,
  });
  const email = request.customer.email.trim().toLowerCase();
  const bookingId = randomUUID();

  try {
    await deps.db.$transaction(async (tx) => {
      const [locked] = await tx.$queryRaw<{ capacity: number; seats_booked: number }[]>`
        SELECT capacity, seats_booked FROM slots WHERE id = ${slot.id}::uuid FOR NO KEY UPDATE`;
      if (await tx.booking.findUnique({ where: { holdId: hold.id }, select: { id: true } })) {
        throw new AppError('hold_not_found');
      }
      const otherHolds = (await deps.holds.liveSeats([slot.id], hold.id)).get(slot.id) ?? 0;
      if (locked!.seats_booked + request.guest_count + otherHolds > locked!.capacity) {
        throw new AppError('capacity_exceeded', 'the seats of this hold were taken after it expired');
      }

      const contact = { firstName: request.customer.first_name, lastName: request.customer.last_name, phone: request.customer.phone };
      const customer = await tx.customer.upsert({
        where: { tenantId_email: { tenantId: hold.tenantId, email } },
        create: { tenantId: hold.tenantId, email, ...contact },
        update: contact,
        select: { id: true },
      });
      await tx.booking.create({
        data: {
          id: bookingId,
          tenantId: hold.tenantId,
          experienceId: experience.id,
          venueId: experience.venueId,
          slotId: slot.id,
          customerId: customer.id,
          holdId: hold.id,
          status: 'held',
          guestCount: request.guest_count,
          notes: request.notes,
          currency: experience.currency,
          ...price,
          addons: { create: addons.map(({ addonId, qty, unitPriceCents }) => ({ addonId, qty, unitPriceCents })) },
        },
      });
      await tx.slot.update({ where: { id: slot.id }, data: { seatsBooked: { increment: request.guest_count } } });
      await recordEvent(tx, {
        tenantId: hold.tenantId,
        name: 'booking.created',
        entityType: 'booking',
        entityId: bookingId,
        fields: {
          booking_id: bookingId,
          experience_id: experience.id,
          venue_id: experience.venueId,
          slot_id: slot.id,
          customer_email: email,
          guest_count: request.guest_count,
        },
      });
    });
  } catch (error) {
    // A concurrent conversion of the same hold committed first.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002') throw new AppError('hold_not_found');
    throw error;
  }
  await deps.holds.release(hold);

  const { tokenSigningSecret: secret, bookingTokenTtlSeconds, publicBaseUrl } = deps.config;
  const waiverToken = experience.requiresWaiver
    ? signToken(secret, 'waiver', {
        subject: bookingId,
        tenantId: hold.tenantId,
        // Guests sign up to the day after their visit.
        ttlSeconds: Math.max(60, Math.ceil((slot.endsAt.getTime() - Date.now()) / 1000) + 24 * 60 * 60),
      })
    : null;
  return {
    booking_id: bookingId,
    booking_token: signToken(secret, 'booking', { subject: bookingId, tenantId: hold.tenantId, ttlSeconds: bookingTokenTtlSeconds }),
    waiver_url: waiverToken ? `${publicBaseUrl}/api/waivers/${waiverToken}` : null,
    status: 'held',
    total_cents: price.totalCents,
    currency: experience.currency,
  };
}
