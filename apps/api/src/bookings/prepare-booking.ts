import type { Config } from '@booking/config';
import type { PgPool } from '@booking/db';
import { AppError, priceBooking, type PricedAddon, type PricedBooking } from '@booking/domain';
import type { Hold, HoldStore } from '../holds/hold-store';
import { presentedMembership, type PresentedMembership } from '../membership-uses/booking-uses';
import type { BookingRequest } from './booking-schemas';
import type { BookingTerms, BookingTermsCache, KnownCustomer } from './booking-terms';
import { priceAddons, refuseDuplicateAddons } from './resolve-addons';
import { normaliseEmail } from '../customers/customer-email';

/** Everything a booking is decided from, read and checked before any lock is taken. */
export interface PreparedBooking {
  /** Names the experience and slot (checked to be the request's). */
  hold: Hold;
  /** The terms the booking was checked and priced from, which its statement checks are still current. */
  terms: BookingTerms;
  addons: PricedAddon[];
  price: PricedBooking;
  /** Read before any lock; the membership itself is locked after the slot. */
  member: PresentedMembership | null;
  /** The request's email, normalised: the customer's key within the tenant. */
  email: string;
  /** The tenant's customer of that email as it was read; null when none was found, or none looked for. */
  customer: KnownCustomer | null;
  /** Seats of the slot's other live holds when it was read (see insert-booking-statement). */
  otherHoldSeats: number;
}

/**
 * Reads what the booking needs, all at once: the hold, the Redis clock it expires by and the
 * slot's other live holds (one script), and the terms of the experience, slot and addons. A
 * plain booking takes the terms this process keeps (see booking-terms) and reads nothing from
 * PostgreSQL here; otherwise, or when none are kept, one SELECT reads them with the customer of
 * the email. The reads go by the ids the request names; they are used only once the hold has
 * been found to name the same ones. Then checks the request (in the order the API has always
 * answered: hold, venue, party size, addons, membership) and prices it. A refusal is never made
 * from kept terms: those are read again and the request checked again first.
 *
 * `fresh` reads the terms even where they are kept: the booking statement found them changed.
 */
export async function prepareBooking(
  deps: { pool: PgPool; holds: HoldStore; terms: BookingTermsCache; config: Config },
  request: BookingRequest,
  fresh = false,
): Promise<PreparedBooking> {
  const requestedAddons = request.addons ?? [];
  const email = normaliseEmail(request.customer.email);
  // The request's ids are in lower case, as holds store them (the parser's doing, see
  // canonical-uuids): they are compared as text here and name Redis keys.
  const { slot_id: slotId, experience_id: experienceId } = request;
  const ids = { experienceId, slotId, addonIds: requestedAddons.map((item) => item.addon_id) };
  const plain = !request.gift_card_code && !request.membership_token;
  const kept = plain && !fresh ? deps.terms.get(ids.experienceId, ids.slotId, ids.addonIds) : undefined;
  const [{ hold, now, otherSeats: others }, read] = await Promise.all([
    deps.holds.readForBooking(slotId, request.hold_id),
    kept ? undefined : deps.terms.read(deps.pool, ids, email),
  ]);
  if (!hold || hold.bookingId !== null) throw new AppError('hold_not_found');
  if (hold.slotId !== slotId || hold.experienceId !== experienceId) {
    throw new AppError('experience_slot_mismatch', 'slot_id and experience_id must be those of the hold');
  }
  if (hold.expiresAt <= now) throw new AppError('hold_expired');
  const decide = (terms: BookingTerms, customer: KnownCustomer | null): PreparedBooking => ({
    ...check(hold, request, terms, customer, others),
    hold,
    email,
    member: presentedMembership(deps.config, hold.tenantId, request),
  });
  if (kept) {
    try {
      // The customer is not read: the statement looks for it (see insert-booking-statement).
      return decide(kept, null);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const again = (await deps.terms.read(deps.pool, ids, email))!;
      return decide(again.terms, again.customer);
    }
  }
  // The hold was placed for this experience and slot, which therefore exist.
  return decide(read!.terms, read!.customer);
}

/** Checks the request against `terms` and prices it. */
function check(
  hold: Hold,
  request: BookingRequest,
  terms: BookingTerms,
  customer: KnownCustomer | null,
  otherHoldSeats: number,
): Omit<PreparedBooking, 'hold' | 'member' | 'email'> {
  const requestedAddons = request.addons ?? [];
  if (terms.venueId !== request.venue_id) {
    throw new AppError('experience_slot_mismatch', 'venue_id is not the venue of the experience');
  }
  if (request.guest_count < terms.minPartySize || request.guest_count > Math.min(terms.maxPartySize, hold.seats)) {
    throw new AppError('invalid_guest_count', {
      min_party_size: terms.minPartySize,
      max_party_size: terms.maxPartySize,
      seats_held: hold.seats,
    });
  }
  refuseDuplicateAddons(requestedAddons);
  const addons = priceAddons(hold.experienceId, requestedAddons, terms.addons);
  const price = priceBooking({
    basePriceCents: terms.basePriceCents,
    slotPriceCents: terms.slotPriceCents,
    guestCount: request.guest_count,
    addons,
  });
  return {
    terms,
    addons,
    price,
    customer,
    otherHoldSeats,
  };
}
