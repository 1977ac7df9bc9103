import type { Config } from '@booking/config';
import type { PgPool } from '@booking/db';
import { AppError, priceBooking, type PricedAddon, type PricedBooking } from '@booking/domain';
import type { Hold, HoldStore } from '../holds/hold-store';
import { presentedMembership, type PresentedMembership } from '../membership-uses/booking-uses';
import type { BookingRequest } from './booking-schemas';
import { priceAddons, refuseDuplicateAddons, type FoundAddon } from './resolve-addons';

/** Everything a booking is decided from, read and checked before any lock is taken. */
export interface PreparedBooking {
  hold: Hold;
  experience: {
    id: string;
    venueId: string;
    currency: string;
    requiresWaiver: boolean;
  };
  slot: { id: string; startsAt: Date; endsAt: Date };
  addons: PricedAddon[];
  price: PricedBooking;
  /** Read before any lock; the membership itself is locked after the slot. */
  member: PresentedMembership | null;
  /** The request's email, normalised: the customer's key within the tenant. */
  email: string;
  /** The tenant's customer of that email as it was read, if any. */
  customer: { id: string; firstName: string; lastName: string | null; phone: string | null } | null;
  /** Seats of the slot's other live holds when it was read (see insert-booking). */
  otherHoldSeats: number;
}

interface ContextRow {
  tenant_id: string;
  venue_id: string;
  currency: string;
  base_price_cents: number;
  min_party_size: number;
  max_party_size: number;
  requires_waiver: boolean;
  starts_at: Date;
  ends_at: Date;
  price_cents: number | null;
  addons: FoundAddon[];
  customer: PreparedBooking['customer'];
}

// The experience, its slot, the requested addons and the customer of the email in one round trip.
const READ_CONTEXT = `
SELECT e.tenant_id, e.venue_id, e.currency, e.base_price_cents, e.min_party_size, e.max_party_size,
       e.requires_waiver, s.starts_at, s.ends_at, s.price_cents,
       (SELECT coalesce(json_agg(json_build_object('id', a.id, 'experienceId', a.experience_id,
                                                   'active', a.active, 'priceCents', a.price_cents)), '[]')
          FROM addons a WHERE a.id = ANY($3::uuid[]) AND a.tenant_id = e.tenant_id) AS addons,
       (SELECT json_build_object('id', c.id, 'firstName', c.first_name, 'lastName', c.last_name, 'phone', c.phone)
          FROM customers c WHERE c.tenant_id = e.tenant_id AND c.email = $4) AS customer
  FROM experiences e JOIN slots s ON s.experience_id = e.id
 WHERE e.id = $1::uuid AND s.id = $2::uuid`;

/**
 * Reads what the booking needs, all at once: the hold and Redis's clock, the slot's other live
 * holds, and (one SELECT) the experience, slot, addons and customer. The reads go by the ids the
 * request names; they are used only once the hold has been found to name the same ones. Then
 * checks the request (in the order the API has always answered: hold, venue, party size,
 * addons, membership) and prices it.
 */
export async function prepareBooking(
  deps: { pool: PgPool; holds: HoldStore; config: Config },
  request: BookingRequest,
): Promise<PreparedBooking> {
  const requestedAddons = request.addons ?? [];
  const email = request.customer.email.trim().toLowerCase();
  // The request's ids are in lower case, as holds store them (the parser's doing, see
  // canonical-uuids): they are compared as text here and name Redis keys.
  const { slot_id: slotId, experience_id: experienceId, venue_id: venueId } = request;
  const [hold, now, otherHolds, rows] = await Promise.all([
    deps.holds.get(request.hold_id),
    deps.holds.now(),
    deps.holds.liveSeats([slotId], request.hold_id),
    deps.pool.query<ContextRow>({
      name: 'booking-context',
      text: READ_CONTEXT,
      values: [experienceId, slotId, requestedAddons.map((item) => item.addon_id), email],
    }),
  ]);
  if (!hold || hold.bookingId !== null) throw new AppError('hold_not_found');
  if (hold.slotId !== slotId || hold.experienceId !== experienceId) {
    throw new AppError('experience_slot_mismatch', 'slot_id and experience_id must be those of the hold');
  }
  if (hold.expiresAt <= now) throw new AppError('hold_expired');
  // The hold was placed for this experience and slot, which therefore exist.
  const row = rows.rows[0]!;
  if (row.venue_id !== venueId) {
    throw new AppError('experience_slot_mismatch', 'venue_id is not the venue of the experience');
  }
  if (request.guest_count < row.min_party_size || request.guest_count > Math.min(row.max_party_size, hold.seats)) {
    throw new AppError('invalid_guest_count', {
      min_party_size: row.min_party_size,
      max_party_size: row.max_party_size,
      seats_held: hold.seats,
    });
  }
  refuseDuplicateAddons(requestedAddons);
  const addons = priceAddons(hold.experienceId, requestedAddons, row.addons);
  const price = priceBooking({
    basePriceCents: row.base_price_cents,
    slotPriceCents: row.price_cents,
    guestCount: request.guest_count,
    addons,
  });
  return {
    hold,
    experience: {
      id: hold.experienceId,
      venueId: row.venue_id,
      currency: row.currency,
      requiresWaiver: row.requires_waiver,
    },
    slot: { id: hold.slotId, startsAt: row.starts_at, endsAt: row.ends_at },
    addons,
    price,
    member: presentedMembership(deps.config, hold.tenantId, request),
    email,
    customer: row.customer,
    otherHoldSeats: otherHolds.get(slotId) ?? 0,
  };
}
