import { randomUUID } from 'node:crypto';
import type { PgPool } from '@booking/db';
import { AppError } from '@booking/domain';
import { deadlinePassed, timeLeftMs } from '../http/request-deadline';
import { eventRow, type EventRow } from '@booking/events';
import {
  changedContactFields,
  customerCreatedEvent,
  customerUpdatedEvent,
  type CustomerContact,
} from '../customers/upsert-booking-customer';
import type { BookingRequest } from './booking-schemas';
import { bookingCreatedEvent, type NewBooking } from './new-booking';
import type { KnownCustomer } from './booking-terms';
import type { PreparedBooking } from './prepare-booking';

/**
 * A plain booking (no gift card, no membership) in ONE statement, which is its own transaction:
 * the slot row is locked only while PostgreSQL works, never across a round trip to Node or Redis.
 *
 * - `slot` locks the slot FOR NO KEY UPDATE (the lock every change of booked seats takes) and
 *   reads its latest seats_booked: a row locked after a wait is re-read at its newest version.
 * - `current_terms`: the terms the booking was checked and priced from (prepared.terms, which may
 *   be ones this process kept: see booking-terms) are still the experience's, slot's and addons'
 *   as this statement reads them (the slot at its newest version, the others as of the
 *   statement's start, as a read before it would). If any changed, nothing is written and the
 *   booking is prepared again from a fresh read.
 * - `verdict`: the hold has no booking yet (a conversion that commits while this one waits is
 *   caught by bookings.hold_id's unique index instead), and booked seats + this booking + the
 *   other live holds fit the capacity. The other holds' seats ($4) were read from Redis before the
 *   statement. That is safe: every hold is placed atomically in Redis against the slot's running
 *   total, this hold's seats (at least the guests booked) included, so a hold placed since the
 *   read fits beside this booking by construction; and seats_booked, which changes only under
 *   this lock, is read exactly. The count can only be too high: a hold that ended since the read,
 *   or one whose seats a confirmation moved into seats_booked since (counted in both). So a
 *   booking that fits is booked here, and one that does not is decided again by the transaction
 *   path, which reads the holds under the lock.
 * - the customer: inserted when none was found or none was looked for ($11 'new'), else locked as
 *   it was read and updated when the contact changed it ('changed'). The rows, and the events built
 *   in Node with the same builders as the transaction's, are written only if that customer is
 *   still as read: if one exists after all (`existing_customer`, answered so that the statement
 *   can be sent again for it), or a concurrent booking made or changed it since, nothing is written.
 * - `late`: the request's deadline (its time left, $29, counted from the statement's start) passed
 *   while the statement waited for the lock. Its client has been told 503, so nothing is written:
 *   a statement that commits by itself is bounded like a transaction's COMMIT (request-deadline).
 * - the booking, its addons and its events (customer.created/updated, booking.created, rows built
 *   by eventRow as recordEvent writes them), which the relay finds at its next poll.
 */
const INSERT_BOOKING = `
WITH slot AS MATERIALIZED (
  SELECT capacity, seats_booked, experience_id, price_cents, starts_at, ends_at
    FROM slots WHERE id = $2::uuid AND tenant_id = $1::uuid FOR NO KEY UPDATE
), current_terms AS MATERIALIZED (
  SELECT s.experience_id = $16::uuid AND e.venue_id = $17::uuid AND e.currency = $21::text
         AND e.base_price_cents = $30::int AND s.price_cents IS NOT DISTINCT FROM $31::int
         AND $3::int BETWEEN e.min_party_size AND e.max_party_size AND e.requires_waiver = $32::boolean
         AND date_trunc('milliseconds', s.starts_at) = $33::timestamptz
         AND date_trunc('milliseconds', s.ends_at) = $34::timestamptz
         AND (SELECT count(*) FROM addons a, unnest($25::uuid[], $27::int[]) AS x(id, price_cents)
               WHERE a.id = x.id AND a.tenant_id = $1::uuid AND a.experience_id = $16::uuid AND a.active
                 AND a.price_cents = x.price_cents) = cardinality($25::uuid[]) AS current
    FROM slot s JOIN experiences e ON e.id = s.experience_id
), verdict AS MATERIALIZED (
  SELECT EXISTS (SELECT 1 FROM bookings WHERE hold_id = $5::uuid) AS hold_used,
         coalesce((SELECT seats_booked + $3::int + $4::int <= capacity FROM slot), false) AS fits,
         coalesce((SELECT current FROM current_terms), false) AS current,
         coalesce((SELECT clock_timestamp() >= statement_timestamp() + $29::int * interval '1 millisecond'
                     FROM slot WHERE $29::int IS NOT NULL), false) AS late
), go AS MATERIALIZED (
  SELECT 1 FROM verdict WHERE fits AND current AND NOT hold_used AND NOT late
), existing_customer AS MATERIALIZED (
  SELECT id, first_name, last_name, phone FROM customers
   WHERE $11::text = 'new' AND tenant_id = $1::uuid AND email = $7::text
), known_customer AS MATERIALIZED (
  SELECT id FROM customers
   WHERE $11::text <> 'new' AND EXISTS (SELECT 1 FROM go)
     AND id = $6::uuid AND tenant_id = $1::uuid AND email = $7::text
     AND first_name = $12::text AND last_name IS NOT DISTINCT FROM $13::text AND phone IS NOT DISTINCT FROM $14::text
     FOR UPDATE
), new_customer AS (
  INSERT INTO customers (id, tenant_id, email, first_name, last_name, phone, updated_at)
  SELECT $6::uuid, $1::uuid, $7::text, $8::text, $9::text, $10::text, now() FROM go
   WHERE $11::text = 'new' AND NOT EXISTS (SELECT 1 FROM existing_customer)
  ON CONFLICT (tenant_id, email) DO NOTHING
  RETURNING id
), customer AS (
  SELECT id FROM new_customer UNION ALL SELECT id FROM known_customer
), changed_customer AS (
  UPDATE customers SET first_name = $8::text, last_name = coalesce($9::text, last_name),
                       phone = coalesce($10::text, phone), updated_at = now()
   WHERE $11::text = 'changed' AND id IN (SELECT id FROM known_customer)
), booking AS (
  INSERT INTO bookings (id, tenant_id, experience_id, venue_id, slot_id, customer_id, hold_id, hold_expires_at,
                        idempotency_ref, status, guest_count, notes, currency, unit_price_cents,
                        addons_total_cents, total_cents, updated_at)
  SELECT $15::uuid, $1::uuid, $16::uuid, $17::uuid, $2::uuid, customer.id, $5::uuid, $18::timestamptz,
         $19::text, 'held', $3::int, $20::text, $21::text, $22::int, $23::int, $24::int, now()
    FROM customer
  RETURNING id
), booking_addons AS (
  INSERT INTO booking_addons (booking_id, addon_id, qty, unit_price_cents)
  SELECT booking.id, a.addon_id, a.qty, a.unit_price_cents
    FROM booking, unnest($25::uuid[], $26::int[], $27::int[]) AS a(addon_id, qty, unit_price_cents)
), outbox AS (
  INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, sealed_data, data, traceparent, tracestate)
  SELECT e.id, e.tenant_id, e.name, e.entity_type, e.entity_id, e.schema_version, e.sealed_data, e.data, e.traceparent, e.tracestate
    FROM booking, jsonb_to_recordset($28::jsonb) AS e(id uuid, tenant_id uuid, name text, entity_type text,
                                                      entity_id uuid, schema_version int, sealed_data text, data jsonb,
                                                      traceparent text, tracestate text)
)
SELECT verdict.hold_used, verdict.late, verdict.fits, NOT verdict.current AS stale_terms, booking.id IS NOT NULL AS booked,
       (SELECT json_build_object('id', id, 'firstName', first_name, 'lastName', last_name, 'phone', phone)
          FROM existing_customer) AS existing_customer
  FROM verdict LEFT JOIN booking ON true`;

/** The customer as the statement is to find it, what it then does with it, and the event that says so. */
function customerPlan(prepared: PreparedBooking, contact: CustomerContact) {
  const known = prepared.customer;
  if (!known) {
    const id = randomUUID();
    return {
      id,
      mode: 'new',
      known,
      event: eventRow(customerCreatedEvent(prepared.hold.tenantId, id, 'booking')),
    } as const;
  }
  const changed = changedContactFields(known, contact);
  if (changed.length === 0) return { id: known.id, mode: 'same', known, event: null } as const;
  return {
    id: known.id,
    mode: 'changed',
    known,
    event: eventRow(customerUpdatedEvent(prepared.hold.tenantId, known.id, changed)),
  } as const;
}

/** The outbox rows as jsonb_to_recordset reads them. */
function outboxRows(rows: EventRow[]) {
  return JSON.stringify(
    rows.map((row) => ({
      id: row.id,
      tenant_id: row.tenantId,
      name: row.name,
      entity_type: row.entityType,
      entity_id: row.entityId,
      schema_version: row.schemaVersion,
      sealed_data: row.sealedData,
      data: row.data,
      traceparent: row.traceparent,
      tracestate: row.tracestate,
    })),
  );
}

/** What the statement did: booked (for this customer), or wrote nothing, and why. */
export type InsertOutcome =
  | { kind: 'booked'; customerId: string }
  /** A term the booking was priced or checked from has changed: prepare it again, from a fresh read. */
  | { kind: 'stale_terms' }
  /** The seats seemed not to fit, or the customer changed since it was read: the transaction decides. */
  | { kind: 'undecided' };

interface Verdict {
  hold_used: boolean;
  late: boolean;
  fits: boolean;
  stale_terms: boolean;
  booked: boolean;
  existing_customer: KnownCustomer | null;
}

/**
 * Writes `booking` as described above. A customer found by the statement when none was expected
 * (the terms were kept, so the customer was not read) gets the statement sent once more, for
 * that customer: a returning customer's booking takes two round trips, a new one's one.
 */
export async function insertBooking(
  pool: PgPool,
  prepared: PreparedBooking,
  booking: NewBooking,
  request: BookingRequest,
): Promise<InsertOutcome> {
  const verdict = await runInsert(pool, prepared, booking, request);
  const found = verdict.existing_customer;
  const again =
    found && !verdict.booked && !verdict.stale_terms && verdict.fits
      ? await runInsert(pool, { ...prepared, customer: found }, booking, request)
      : verdict;
  if (again.booked) return { kind: 'booked', customerId: again.customerId };
  return again.stale_terms ? { kind: 'stale_terms' } : { kind: 'undecided' };
}

async function runInsert(
  pool: PgPool,
  prepared: PreparedBooking,
  booking: NewBooking,
  request: BookingRequest,
): Promise<Verdict & { customerId: string }> {
  const contact = {
    firstName: request.customer.first_name,
    lastName: request.customer.last_name,
    phone: request.customer.phone,
  };
  const customer = customerPlan(prepared, contact);
  const events = [...(customer.event ? [customer.event] : []), eventRow(bookingCreatedEvent(booking, prepared.email))];
  const { terms } = prepared;
  let result;
  try {
    // Past the deadline already, the pool refuses the statement itself (refuseStatementPastDeadline).
    const left = timeLeftMs();
    result = await pool.query<Verdict>({
      name: 'insert-booking',
      text: INSERT_BOOKING,
      values: [
        booking.tenantId,
        booking.slotId,
        booking.guestCount,
        prepared.otherHoldSeats,
        booking.holdId,
        customer.id,
        prepared.email,
        contact.firstName,
        contact.lastName ?? null,
        contact.phone ?? null,
        customer.mode,
        customer.known?.firstName ?? null,
        customer.known?.lastName ?? null,
        customer.known?.phone ?? null,
        booking.id,
        booking.experienceId,
        booking.venueId,
        booking.holdExpiresAt,
        booking.idempotencyRef ?? null,
        booking.notes ?? null,
        booking.currency,
        booking.unitPriceCents,
        booking.addonsTotalCents,
        booking.totalCents,
        prepared.addons.map((addon) => addon.addonId),
        prepared.addons.map((addon) => addon.qty),
        prepared.addons.map((addon) => addon.unitPriceCents),
        outboxRows(events),
        left === undefined ? null : Math.floor(left),
        terms.basePriceCents,
        terms.slotPriceCents,
        terms.requiresWaiver,
        terms.startsAt,
        terms.endsAt,
      ],
    });
  } catch (error) {
    // A concurrent conversion of the same hold committed first (bookings.hold_id is unique).
    if (
      (error as { code?: string }).code === '23505' &&
      /hold_id/.test((error as { constraint?: string }).constraint ?? '')
    )
      throw new AppError('hold_not_found');
    throw error;
  }
  const verdict = result.rows[0]!;
  if (verdict.hold_used) throw new AppError('hold_not_found');
  if (verdict.late) throw deadlinePassed('the request deadline passed while the booking waited for its slot');
  return { ...verdict, customerId: customer.id };
}
