import type { Db } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { lockSlotAndReserveSeats } from '../bookings/lock-slot';
import { changeBookedSeats } from '../holds/booked-seats';
import type { HoldStore } from '../holds/hold-store';
import { lockBooking } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { PartyAmendmentRequest, PartyAmendmentResponse } from './amendment-schemas';

/**
 * Adds or removes guests on a confirmed booking. Under the booking lock and then the slot lock,
 * added guests must fit beside the booked seats and live holds; the slot's booked seats move by
 * the delta, and the booking's total by delta × its unit price (the price it was booked at).
 * The money delta is recorded on the amendment and the event; collecting or refunding it is
 * left to the payment operations.
 */
export async function updateParty(
  deps: { db: Db; holds: HoldStore },
  operator: Operator,
  bookingId: string,
  request: PartyAmendmentRequest,
): Promise<PartyAmendmentResponse> {
  const reason = request.reason ?? null;
  return deps.db.$transaction(async (tx) => {
    const booking = await lockBooking(tx, bookingId, { tenantId: operator.tenantId });
    assertBookingAllows(booking.status, 'amend');
    // Its visit, guest passes and member discount were counted for this party: a new party is a new booking.
    if (booking.membershipId) {
      throw new AppError('booking_not_amendable', {
        message: 'a booking made with a membership keeps its party; cancel it and book again',
        membership_id: booking.membershipId,
      });
    }
    if (request.guest_count === booking.guestCount) {
      throw new AppError('invalid_body', [
        { field: '/guest_count', message: 'is already the guest count of the booking' },
      ]);
    }
    const experience = await tx.experience.findUniqueOrThrow({
      where: { id: booking.experienceId },
      select: { minPartySize: true, maxPartySize: true },
    });
    if (request.guest_count < experience.minPartySize || request.guest_count > experience.maxPartySize) {
      throw new AppError('invalid_guest_count', {
        min_party_size: experience.minPartySize,
        max_party_size: experience.maxPartySize,
      });
    }
    const guestDelta = request.guest_count - booking.guestCount;
    // Taken for removals too: every change of booked seats happens under the slot lock.
    const fits = await lockSlotAndReserveSeats(tx, deps.holds, {
      tenantId: operator.tenantId,
      slotId: booking.slotId,
      seats: Math.max(0, guestDelta),
      exceptHoldId: booking.holdId,
    });
    if (guestDelta > 0 && !fits) {
      throw new AppError('capacity_exceeded', `the slot has no room for ${guestDelta} more guests`);
    }

    const amountDeltaCents = guestDelta * booking.unitPriceCents;
    const totalCents = booking.totalCents + amountDeltaCents;
    await changeBookedSeats(tx, deps.holds, booking.slotId, guestDelta);
    await tx.booking.update({ where: { id: bookingId }, data: { guestCount: request.guest_count, totalCents } });
    await tx.bookingAmendment.create({
      data: {
        tenantId: operator.tenantId,
        bookingId,
        kind: 'party',
        guestDelta,
        amountDeltaCents,
        reason,
        actorKeyId: operator.keyId,
      },
    });
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'booking.party_updated',
      entityType: 'booking',
      entityId: bookingId,
      fields: {
        ...bookingEventSubject(booking),
        guest_delta: guestDelta,
        previous_guest_count: booking.guestCount,
        guest_count: request.guest_count,
        amount_delta_cents: amountDeltaCents,
        total_cents: totalCents,
        currency: booking.currency,
        actor_user_id: operator.keyId,
        reason,
      },
    });
    return {
      booking_id: bookingId,
      guest_count: request.guest_count,
      total_cents: totalCents,
      amount_delta_cents: amountDeltaCents,
    };
  });
}
