import type { PgPool } from '@booking/db';
import { LRUCache } from 'lru-cache';
import type { FoundAddon } from './resolve-addons';

/** What a booking is priced and checked from: its experience's and slot's terms, and its addons. */
export interface BookingTerms {
  tenantId: string;
  venueId: string;
  currency: string;
  basePriceCents: number;
  minPartySize: number;
  maxPartySize: number;
  requiresWaiver: boolean;
  startsAt: Date;
  endsAt: Date;
  /** The slot's own price per guest, if it has one. */
  slotPriceCents: number | null;
  /** The requested addons found among the tenant's (by id). */
  addons: FoundAddon[];
}

/** The tenant's customer of the booking's email as a read found it. */
export interface KnownCustomer {
  id: string;
  firstName: string;
  lastName: string | null;
  phone: string | null;
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
  customer: KnownCustomer | null;
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

/** How long terms are kept: operators rarely change prices, and a booking checks them anyway. */
const TERMS_TTL_MS = 30_000;
/** Slots and addons kept per process; past that the least recently booked are dropped. */
const MAX_ENTRIES = 10_000;

/** A slot's entry: its experience, and the terms but for the addons. */
type SlotEntry = { experienceId: string; terms: Omit<BookingTerms, 'addons'> };
/** An addon's entry: its tenant, and the addon as a read found it. */
type AddonEntry = { tenantId: string; addon: FoundAddon };

/**
 * The terms of recently booked slots, kept in this process so that a plain booking needs no
 * read before its one statement. A kept entry may be stale (an operator changed a price on
 * another replica): the booking statement compares every term it used with the rows as it reads
 * them and writes nothing if one changed (see insert-booking-statement), and a refusal made from
 * kept terms is made again from a fresh read; so staleness costs a round trip, never a price or a refusal
 * older than a read made just before the statement would give.
 */
export class BookingTermsCache {
  private readonly slots = new LRUCache<string, SlotEntry>({ max: MAX_ENTRIES, ttl: TERMS_TTL_MS });
  private readonly addons = new LRUCache<string, AddonEntry>({ max: MAX_ENTRIES, ttl: TERMS_TTL_MS });

  /** The kept terms of this slot of this experience with every addon in `addonIds`, or undefined. */
  get(experienceId: string, slotId: string, addonIds: string[]): BookingTerms | undefined {
    const slot = this.slots.get(slotId);
    if (!slot || slot.experienceId !== experienceId) return undefined;
    const addons: FoundAddon[] = [];
    for (const id of addonIds) {
      const entry = this.addons.get(id);
      if (!entry || entry.tenantId !== slot.terms.tenantId) return undefined;
      addons.push(entry.addon);
    }
    return { ...slot.terms, addons };
  }

  /** Reads the terms (and the customer of `email`) and keeps the terms. */
  async read(
    pool: PgPool,
    ids: { experienceId: string; slotId: string; addonIds: string[] },
    email: string,
  ): Promise<{ terms: BookingTerms; customer: KnownCustomer | null } | undefined> {
    const { rows } = await pool.query<ContextRow>({
      name: 'booking-context',
      text: READ_CONTEXT,
      values: [ids.experienceId, ids.slotId, ids.addonIds, email],
    });
    // None when the request names a slot of another experience, or none: the hold check refuses it.
    const row = rows[0];
    if (!row) return undefined;
    const terms = {
      tenantId: row.tenant_id,
      venueId: row.venue_id,
      currency: row.currency,
      basePriceCents: row.base_price_cents,
      minPartySize: row.min_party_size,
      maxPartySize: row.max_party_size,
      requiresWaiver: row.requires_waiver,
      startsAt: row.starts_at,
      endsAt: row.ends_at,
      slotPriceCents: row.price_cents,
    };
    this.slots.set(ids.slotId, { experienceId: ids.experienceId, terms });
    for (const addon of row.addons) this.addons.set(addon.id, { tenantId: row.tenant_id, addon });
    return { terms: { ...terms, addons: row.addons }, customer: row.customer };
  }
}
