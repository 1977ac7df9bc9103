import type { Db } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { changeBookedSeats } from '../holds/booked-seats';
import type { HoldStore } from '../holds/hold-store';
import { lockBooking, lockSlots } from '../locks';
import { moveBookingUses } from '../membership-uses/reschedule-uses';
import type { AmendmentActor } from './amendment-auth';
import type { RescheduleRequest, RescheduleResponse } from './amendment-schemas';

/**
 * Moves a confirmed booking that was not checked in to another slot of its experience, by an
 * operator or by the customer through a manage link (until the visit starts). All in one
 * transaction: the booking row is locked, then both slot rows (in id order); the new slot must
 * not have started and must fit the guests beside its booked seats and live holds (counted as
 * booked in Redis at once, see HoldStore.reserveSeats); the seats move, the booking points at the
 * new slot, and the amendment and booking.rescheduled are written. Payment is unchanged, whatever
 * the new slot's price. A booking made with a membership takes its reserved visit and guest
 * passes along, into the allowance period of the new slot (moveBookingUses).
 */
export async function rescheduleBooking(
  deps: { db: Db; holds: HoldStore },
  actor: AmendmentActor,
  bookingId: string,
  request: RescheduleRequest,
): Promise<RescheduleResponse> {
  const reason = request.reason ?? null;
  return deps.db.$transaction(async (tx) => {
    const booking = await lockBooking(tx, bookingId, { tenantId: actor.tenantId });
    assertBookingAllows(booking.status, 'amend');
    if (request.slot_id === booking.slotId) {
      throw new AppError('invalid_body', [{ field: '/slot_id', message: 'is already the slot of the booking' }]);
    }
    // A visit that happened is not moved: a second visit would come of it.
    if (booking.checkedInAt) throw new AppError('booking_not_amendable', 'the booking has been checked in');
    const slots = await lockSlots(tx, actor.tenantId, [booking.slotId, request.slot_id]);
    // The customer's own changes end when the visit starts. The manage link outlives that once
    // the booking was moved to an earlier slot (it keeps the first slot's expiry).
    if (actor.keyId === null && slots.get(booking.slotId)!.startsAt.getTime() <= Date.now()) {
      throw new AppError('booking_not_amendable', 'the visit has started; the venue can still move it');
    }
    const to = slots.get(request.slot_id);
    if (!to) throw new AppError('slot_not_found');
    if (to.experienceId !== booking.experienceId) {
      throw new AppError('experience_slot_mismatch', 'the new slot belongs to another experience');
    }
    if (to.startsAt.getTime() <= Date.now()) throw new AppError('slot_unavailable', 'the slot has already started');
    // A membership's visit moves with the booking, into the allowance of the new slot's period.
    await moveBookingUses(tx, booking, to.startsAt);

    // Last of the checks, as it counts the seats in Redis at once (a hold placed before the commit
    // cannot take them): a refusal after it would leave them counted until the mirror expires.
    if (!(await deps.holds.reserveSeats(to, booking.guestCount))) {
      const held = (await deps.holds.liveSeats([to.id])).get(to.id) ?? 0;
      throw new AppError('capacity_exceeded', {
        message: 'the new slot has no room for the booking',
        guest_count: booking.guestCount,
        seats_remaining: Math.max(0, to.capacity - to.seatsBooked - held),
      });
    }

    await changeBookedSeats(tx, deps.holds, booking.slotId, -booking.guestCount);
    await changeBookedSeats(tx, deps.holds, to.id, booking.guestCount);
    await tx.booking.update({ where: { id: bookingId }, data: { slotId: to.id } });
    await tx.bookingAmendment.create({
      data: {
        tenantId: actor.tenantId,
        bookingId,
        kind: 'reschedule',
        fromSlotId: booking.slotId,
        toSlotId: to.id,
        reason,
        actorKeyId: actor.keyId,
      },
    });
    await recordEvent(tx, {
      tenantId: actor.tenantId,
      name: 'booking.rescheduled',
      entityType: 'booking',
      entityId: bookingId,
      fields: {
        ...bookingEventSubject({ ...booking, slotId: to.id }),
        new_slot_id: to.id,
        new_slot_starts_at: to.startsAt.toISOString(),
        new_slot_ends_at: to.endsAt.toISOString(),
        rescheduled_by_user_id: actor.keyId,
        reason,
      },
    });
    return {
      booking_id: bookingId,
      slot: { id: to.id, starts_at: to.startsAt.toISOString(), ends_at: to.endsAt.toISOString() },
    };
  });
}
