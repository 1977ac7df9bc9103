import type { Config } from '@booking/config';
import type { Db, PgPool } from '@booking/db';
import { AppError } from '@booking/domain';
import type { HoldStore } from '../holds/hold-store';
import { countBookingCreated } from '../http/counters';
import { bookInTransaction } from './book-in-transaction';
import type { BookingTermsCache } from './booking-terms';
import { bookingAnswer, committedBookingAnswer } from './booking-answer';
import type { BookingRequest, BookingResponse } from './booking-schemas';
import { insertBooking } from './insert-booking';
import { newBooking } from './new-booking';
import { prepareBooking, type PreparedBooking } from './prepare-booking';

type Deps = { db: Db; pool: PgPool; holds: HoldStore; terms: BookingTermsCache; config: Config };

/**
 * Turns a live hold into a booking: `held` (to be paid by card) or, when a gift card or a
 * member discount covers the whole total, or there is nothing to pay, `confirmed` at once.
 *
 * Capacity is decided again under the slot row's lock (in one statement, see
 * insert-booking-statement, or in a transaction with a gift card or a membership): booked seats +
 * this booking + every other live hold must fit. Holds and bookings on the same slot queue on
 * that lock, so replicas racing for the last seats cannot oversell. The hold is consumed exactly
 * once: bookings.hold_id is unique, and the transaction also finds the first booking under the
 * lock. A `held` booking keeps its seats through its hold, shrunk to the booked guests, until the
 * hold expires.
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

/** Statements a plain booking sends, each checking its terms, before terms that keep changing make it give up. */
const MAX_TERM_CHECKS = 3;

async function bookHold(deps: Deps, request: BookingRequest, idempotencyRef: string | undefined) {
  let prepared = await prepareBooking(deps, request);
  // A free booking is written by the transaction, which does not compare terms: it is priced from
  // a fresh read, never from terms this process kept (a price set since would go unpaid).
  const free = !prepared.member && !request.gift_card_code && prepared.price.totalCents === 0;
  if (free) prepared = await prepareBooking(deps, request, true);
  let booking = newBooking(prepared, request, idempotencyRef);
  // The common booking is one statement; a gift card or a membership locks more rows, in the
  // lock order, in a transaction, and so does a free one, confirmed at once. So does a plain
  // booking the statement could not decide (see insert-booking-statement): a refusal for seats, or
  // a customer that changed under it.
  const plain = (p: PreparedBooking) => !p.member && !request.gift_card_code && p.price.totalCents > 0;
  let outcome = plain(prepared) ? await insertBooking(deps.pool, prepared, booking, request) : null;
  for (let checks = 1; outcome?.kind === 'stale_terms'; checks += 1) {
    // A price or term changed since it was read or kept: decide and price the booking again.
    // Never in the transaction, which does not compare terms: a term that changes before every
    // statement (a bulk repricing) ends in a 503 the client retries, its hold untouched.
    if (checks === MAX_TERM_CHECKS)
      throw new AppError('service_unavailable', "the experience's terms changed while booking; try again");
    prepared = await prepareBooking(deps, request, true);
    booking = newBooking(prepared, request, idempotencyRef);
    outcome = plain(prepared) ? await insertBooking(deps.pool, prepared, booking, request) : null;
  }
  const created =
    outcome?.kind === 'booked'
      ? { customerId: outcome.customerId, giftCardAppliedCents: 0, memberDiscountCents: 0, paymentComplete: false }
      : await bookInTransaction(deps, prepared, booking, request);
  countBookingCreated(created.paymentComplete ? 'confirmed' : 'held');

  if (!created.paymentComplete) {
    // The booking is committed: its answer must reach the client. A hold left unconverted only
    // over-reserves until it expires, and bookings.hold_id already stops a second use.
    await deps.holds.convert(prepared.hold, booking.id, booking.guestCount).catch(() => undefined);
  }

  return bookingAnswer(deps.config, {
    ...booking,
    ...created,
    requiresWaiver: prepared.terms.requiresWaiver,
    slot: prepared.terms,
  });
}
