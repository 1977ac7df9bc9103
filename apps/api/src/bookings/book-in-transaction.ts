import { Prisma, type Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { upsertBookingCustomer } from '../customers/upsert-booking-customer';
import { applyGiftCard } from '../gift-cards/apply-gift-card';
import type { HoldStore } from '../holds/hold-store';
import { lockMemberBookingTerms, memberDiscountCents, recordBookingUses } from '../membership-uses/booking-uses';
import type { BookingRequest } from './booking-schemas';
import { confirmBooking } from './confirm-booking';
import { lockSlotAndCheckSeats } from './lock-slot';
import { bookingCreatedEvent, type NewBooking } from './new-booking';
import type { PreparedBooking } from './prepare-booking';

/**
 * Writes a booking in an interactive transaction: one with a gift card or a membership, which
 * lock more rows in the lock order, a free one (confirmed at once), or a plain one its single
 * statement could not decide (see insert-booking-statement). Under the slot lock, the other live
 * holds are read from Redis.
 */
export async function bookInTransaction(
  deps: { db: Db; holds: HoldStore },
  prepared: PreparedBooking,
  booking: NewBooking,
  request: BookingRequest,
) {
  const { hold, member, price, addons, email } = prepared;
  let giftCardAppliedCents = 0;
  let paymentComplete = false;
  let customerId = '';
  let memberDiscount = 0;
  try {
    await deps.db.$transaction(async (tx) => {
      const fits = await lockSlotAndCheckSeats(tx, deps.holds, {
        tenantId: hold.tenantId,
        slotId: booking.slotId,
        seats: booking.guestCount,
        exceptHoldId: hold.id,
      });
      if (await tx.booking.findUnique({ where: { holdId: hold.id }, select: { id: true } }))
        throw new AppError('hold_not_found');
      if (!fits) throw new AppError('capacity_exceeded', 'the seats of this hold are no longer available');

      // The membership presented pays its visit from its allowance and may discount the total:
      // the customer pays (gift card and card alike) the discounted total.
      const terms = member ? await lockMemberBookingTerms(tx, hold.tenantId, member, prepared.terms.startsAt) : null;
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
          ...booking,
          customerId,
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
      await recordEvent(tx, bookingCreatedEvent(booking, email));
      const used = { ...booking, customerEmail: email, memberDiscountCents: memberDiscount };
      if (terms) await recordBookingUses(tx, terms, used);
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
      // Nothing left to pay: fully covered by a gift card, or by the member discount alone, or
      // free to begin with.
      const paidBy =
        giftCard && giftCardAppliedCents === booking.totalCents
          ? 'gift_card'
          : terms && booking.totalCents === 0
            ? 'membership'
            : booking.totalCents === 0
              ? 'free'
              : null;
      paymentComplete = paidBy !== null;
      if (paidBy) {
        // Still under the slot lock: the seats leave the hold as they enter seats_booked.
        await confirmBooking(tx, deps.holds, used, hold, { method: paidBy, netPaidCents: giftCardAppliedCents });
      }
    });
  } catch (error) {
    // A concurrent conversion of the same hold committed first.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002')
      throw new AppError('hold_not_found');
    throw error;
  }
  return { customerId, giftCardAppliedCents, memberDiscountCents: memberDiscount, paymentComplete };
}
