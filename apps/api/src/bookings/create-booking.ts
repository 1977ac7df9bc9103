import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import { Prisma, type Db } from '@booking/db';
import { AppError, priceBooking } from '@booking/domain';
import { bookingEventSubject, recordEvent } from '@booking/events';
import { applyGiftCard } from '../gift-cards/apply-gift-card';
import type { Hold, HoldStore } from '../holds/hold-store';
import { bookingAnswer, committedBookingAnswer } from './booking-answer';
import type { BookingRequest, BookingResponse } from './booking-schemas';
import { confirmBooking } from './confirm-booking';
import { lockSlotAndCheckSeats } from './lock-slot';
import { resolveAddons } from './resolve-addons';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import {
  lockMemberBookingTerms,
  memberDiscountCents,
  presentedMembership,
  recordBookingUses,
} from '../membership-uses/booking-uses';

type Deps = { db: Db; holds: HoldStore; config: Config };

/** Checks the request against its hold; returns the live, unused hold. */
async function loadHold(holds: HoldStore, request: BookingRequest): Promise<Hold> {
  const hold = await holds.get(request.hold_id);
  if (!hold || hold.bookingId !== null) throw new AppError('hold_not_found');
  if (hold.slotId !== request.slot_id || hold.experienceId !== request.experience_id) {
    throw new AppError('experience_slot_mismatch', 'slot_id and experience_id must be those of the hold');
  }
  if (hold.expiresAt <= (await holds.now())) throw new AppError('hold_expired');
  return hold;
}

/**
 * Turns a live hold into a booking: `held` (to be paid by card) or, when a gift card covers
 * the whole total, `confirmed` at once.
 *
 * Capacity is decided again inside the transaction, under the slot row's lock: booked seats +
 * this booking + every other live hold must fit. Holds and bookings on the same slot queue on
 * that lock, so replicas racing for the last seats cannot oversell. The hold is consumed exactly
 * once: a second conversion finds the first booking under the lock (and bookings.hold_id is
 * unique besides). A `held` booking keeps its seats through its hold, shrunk to the booked
 * guests, until the hold expires.
 *
 * A membership presented by its member token (membership_token) is locked after the slot: the
 * booking reserves one visit and any guest passes from the allowance of the slot's period, and
 * the plan's member discount comes off the total the customer pays (see membership-uses).
 */
export async function createBooking(
  deps: Deps,
  request: BookingRequest,
  idempotencyRef?: string,
): Promise<{ booking: BookingResponse; replayed: boolean }> {
  try {
    return { booking: await bookHold(deps, request, idempotencyRef), replayed: false };
  } catch (error) {
    // The hold is gone or used: maybe by an earlier run of this request that committed and
    // died before answering (or whose answer Redis lost). Then that booking is the answer.
    const holdUsed = error instanceof AppError && (error.code === 'hold_not_found' || error.code === 'hold_expired');
    if (holdUsed && idempotencyRef !== undefined) {
      const committed = await committedBookingAnswer(deps, request, idempotencyRef);
      if (committed) return { booking: committed, replayed: true };
    }
    throw error;
  }
}

async function bookHold(deps: Deps, request: BookingRequest, idempotencyRef: string | undefined) {
  const hold = await loadHold(deps.holds, request);
  const experience = await deps.db.experience.findUniqueOrThrow({
    where: { id: hold.experienceId },
    include: { slots: { where: { id: hold.slotId } } },
  });
  const slot = experience.slots[0]!;
  if (experience.venueId !== request.venue_id) {
    throw new AppError('experience_slot_mismatch', 'venue_id is not the venue of the experience');
  }
  if (
    request.guest_count < experience.minPartySize ||
    request.guest_count > Math.min(experience.maxPartySize, hold.seats)
  ) {
    throw new AppError('invalid_guest_count', {
      min_party_size: experience.minPartySize,
      max_party_size: experience.maxPartySize,
      seats_held: hold.seats,
    });
  }
  const addons = await resolveAddons(
    deps.db,
    { tenantId: hold.tenantId, experienceId: experience.id },
    request.addons ?? [],
  );
  const price = priceBooking({
    basePriceCents: experience.basePriceCents,
    slotPriceCents: slot.priceCents,
    guestCount: request.guest_count,
    addons,
  });
  // A member token is read before any lock; the membership itself is locked after the slot.
  const member = presentedMembership(deps.config, hold.tenantId, request);
  const email = request.customer.email.trim().toLowerCase();
  const booking = {
    id: randomUUID(),
    tenantId: hold.tenantId,
    experienceId: experience.id,
    venueId: experience.venueId,
    slotId: slot.id,
    guestCount: request.guest_count,
    totalCents: price.totalCents,
    currency: experience.currency,
    customerEmail: email,
  };

  let giftCardAppliedCents = 0;

  /** Nothing left to pay at creation: the booking is confirmed in its own transaction. */

  let paymentComplete = false;
  let customerId = '';
  let memberDiscount = 0;
  try {
    await deps.db.$transaction(async (tx) => {
      const fits = await lockSlotAndCheckSeats(tx, deps.holds, {
        tenantId: hold.tenantId,
        slotId: slot.id,
        seats: request.guest_count,
        exceptHoldId: hold.id,
      });
      if (await tx.booking.findUnique({ where: { holdId: hold.id }, select: { id: true } }))
        throw new AppError('hold_not_found');
      if (!fits) throw new AppError('capacity_exceeded', 'the seats of this hold are no longer available');

      // The membership presented pays its visit from its allowance and may discount the total:
      // the customer pays (gift card and card alike) the discounted total.
      const terms = member ? await lockMemberBookingTerms(tx, hold.tenantId, member, slot.startsAt) : null;
      memberDiscount = terms ? memberDiscountCents(price.totalCents, terms.discountPercent) : 0;
      booking.totalCents = price.totalCents - memberDiscount;

      // A total the member discount took to zero needs no gift card: the code is not charged.
      const giftCard =
        request.gift_card_code && booking.totalCents > 0
          ? await applyGiftCard(tx, {
              tenantId: hold.tenantId,
              code: request.gift_card_code,
              currency: booking.currency,
              totalCents: booking.totalCents,
            })
          : null;
      giftCardAppliedCents = giftCard?.appliedCents ?? 0;

      customerId = await upsertBookingCustomer(tx, hold.tenantId, email, {
        firstName: request.customer.first_name,
        lastName: request.customer.last_name,
        phone: request.customer.phone,
      });
      await tx.booking.create({
        data: {
          id: booking.id,
          tenantId: booking.tenantId,
          experienceId: booking.experienceId,
          venueId: booking.venueId,
          slotId: booking.slotId,
          customerId,
          holdId: hold.id,
          holdExpiresAt: new Date(hold.expiresAt),
          idempotencyRef,
          status: 'held',
          guestCount: booking.guestCount,
          notes: request.notes,
          currency: booking.currency,
          ...price,
          totalCents: booking.totalCents,
          membershipId: terms?.membership.id,
          memberDiscountCents: memberDiscount,
          giftCardId: giftCard?.giftCardId,
          giftCardAppliedCents,
          addons: { create: addons.map(({ addonId, qty, unitPriceCents }) => ({ addonId, qty, unitPriceCents })) },
          payments: giftCard
            ? {
                create: {
                  tenantId: booking.tenantId,
                  method: 'gift_card',
                  amountCents: giftCard.appliedCents,
                  currency: booking.currency,
                  status: 'succeeded',
                },
              }
            : undefined,
        },
      });
      await recordEvent(tx, {
        tenantId: booking.tenantId,
        name: 'booking.created',
        entityType: 'booking',
        entityId: booking.id,
        fields: { ...bookingEventSubject(booking), guest_count: booking.guestCount },
      });
      if (terms) await recordBookingUses(tx, terms, { ...booking, memberDiscountCents: memberDiscount });
      if (giftCard) {
        // Codes are bearer secrets: the event names the card, never its code.
        await recordEvent(tx, {
          tenantId: booking.tenantId,
          name: 'gift_card.redeemed',
          entityType: 'booking',
          entityId: booking.id,
          fields: {
            gift_card_id: giftCard.giftCardId,
            booking_id: booking.id,
            amount_cents: giftCard.appliedCents,
            currency: booking.currency,
          },
        });
      }
      // Nothing left to pay: fully covered by a gift card, or by the member discount alone.
      const paidBy =
        giftCard && giftCardAppliedCents === booking.totalCents
          ? 'gift_card'
          : terms && booking.totalCents === 0
            ? 'membership'
            : null;
      paymentComplete = paidBy !== null;
      if (paidBy) {
        await confirmBooking(tx, booking, { method: paidBy, netPaidCents: giftCardAppliedCents });
        // Still under the slot lock: the seats leave the hold as they enter seats_booked, so no
        // replica ever counts them twice (and refuses a live hold for it).
        await deps.holds.release(hold.slotId, hold.id, hold.seats);
      }
    });
  } catch (error) {
    // A concurrent conversion of the same hold committed first.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')
      throw new AppError('hold_not_found');
    throw error;
  }

  if (!paymentComplete) {
    // The booking is committed: its answer must reach the client. A hold left unconverted only
    // over-reserves until it expires, and bookings.hold_id already stops a second use.
    await deps.holds.convert(hold, booking.id, booking.guestCount).catch(() => undefined);
  }

  return bookingAnswer(deps.config, {
    ...booking,
    customerId,
    giftCardAppliedCents,
    memberDiscountCents: memberDiscount,
    paymentComplete,
    requiresWaiver: experience.requiresWaiver,
    slot,
  });
}
