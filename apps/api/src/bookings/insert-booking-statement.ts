import { numberParameters, type NumberedStatement } from '@booking/db';

/*
 * A plain booking (no gift card, no membership) in ONE statement, which is its own transaction:
 * the slot row is locked only while PostgreSQL works, never across a round trip to Node or Redis.
 *
 * - `slot` locks the slot FOR NO KEY UPDATE (the lock every change of booked seats takes) and
 *   reads its latest seats_booked: a row locked after a wait is re-read at its newest version.
 * - `current_terms`: the terms the booking was checked and priced from (prepared.terms, which may
 *   be ones this process kept: see booking-terms) are still the experience's, slot's and addons'
 *   as this statement reads them (the slot at its newest version, the others as of the statement's
 *   start, as a read before it would). If any changed, nothing is written and the booking is
 *   prepared again from a fresh read.
 * - `verdict`: booked seats + this booking + the other live holds fit the capacity. The other
 *   holds' seats (`otherHoldSeats`) were read from Redis before the statement. That is safe: every
 *   hold is placed atomically in Redis against the slot's running total, this hold's seats (at
 *   least the guests booked) included, so a hold placed since the read fits beside this booking by
 *   construction; and seats_booked, which changes only under this lock, is read exactly. The count
 *   can only be too high: a hold that ended since the read, or one whose seats a confirmation
 *   moved into seats_booked since (counted in both). So a booking that fits is booked here, and
 *   one that does not is decided again by the transaction path, which reads the holds under the
 *   lock.
 * - the customer: inserted when none was found or none was looked for (`new`), else locked as it
 *   was read and updated when the contact changed it (`known`). The rows, and the events built in
 *   Node with the same builders as the transaction's, are written only if that customer is still
 *   as read: if one exists after all (`existing_customer`, answered so that the statement can be
 *   sent again for it), or a concurrent booking made or changed it since, nothing is written.
 * - `late`: the request's deadline (its time left, `timeLeftMs`, counted from the statement's
 *   start) passed while the statement waited for the lock. Its client has been told 503, so
 *   nothing is written: a statement that commits by itself is bounded like a transaction's COMMIT
 *   (request-deadline).
 * - the booking, its addons and its events (customer.created/updated, booking.created, rows built
 *   by eventRow as recordEvent writes them), which the relay finds at its next poll. A hold that
 *   already has a booking (an earlier conversion, or one that committed while this one waited for
 *   the lock) fails the booking's insert on bookings.hold_id's unique index: `hold_not_found`, and
 *   the statement writes nothing. (A statement that stops earlier writes nothing: the transaction
 *   path finds the booking under the lock, a stale one or one sent again for a customer it found
 *   meets the index the next time, and a late one is a 503.)
 */

/**
 * The parts a booking's statement needs: the customer as the statement is to find it (`new`: none
 * was found or none was looked for; `known`: found, with its contact as read), and whether it has
 * addons. Each shape is its own prepared statement, without the parts the others need: PostgreSQL
 * starts every node of a plan on every execution. The common booking's shape (a new customer, no
 * addons), which also leaves the used hold to the unique index, spent 18% less of PostgreSQL's CPU
 * than the one statement with every part (0.82x in 6 paired bench rounds).
 */
export interface StatementShape {
  customer: 'new' | 'known';
  addons: boolean;
}

type BookingStatement = NumberedStatement & { name: string };

const nameOf = (shape: StatementShape) => `insert-booking-${shape.customer}${shape.addons ? '-addons' : ''}`;

/** The statement of `shape` (what each part does is said above). */
export function insertBookingStatement(shape: StatementShape): BookingStatement {
  return STATEMENTS.get(nameOf(shape))!;
}

const sql = ({ customer, addons }: StatementShape) => `
WITH slot AS MATERIALIZED (
  SELECT capacity, seats_booked, experience_id, price_cents, starts_at, ends_at
    FROM slots WHERE id = :slotId::uuid AND tenant_id = :tenantId::uuid FOR NO KEY UPDATE
), current_terms AS MATERIALIZED (
  SELECT s.experience_id = :experienceId::uuid AND e.venue_id = :venueId::uuid AND e.currency = :currency::text
         AND e.base_price_cents = :basePriceCents::int AND s.price_cents IS NOT DISTINCT FROM :slotPriceCents::int
         AND :guestCount::int BETWEEN e.min_party_size AND e.max_party_size
         AND e.requires_waiver = :requiresWaiver::boolean
         AND date_trunc('milliseconds', s.starts_at) = :startsAt::timestamptz
         AND date_trunc('milliseconds', s.ends_at) = :endsAt::timestamptz${
           addons
             ? `
         AND (SELECT count(*) FROM addons a, unnest(:addonIds::uuid[], :addonPrices::int[]) AS x(id, price_cents)
               WHERE a.id = x.id AND a.tenant_id = :tenantId::uuid AND a.experience_id = :experienceId::uuid AND a.active
                 AND a.price_cents = x.price_cents) = cardinality(:addonIds::uuid[])`
             : ''
         } AS current
    FROM slot s JOIN experiences e ON e.id = s.experience_id
), verdict AS MATERIALIZED (
  SELECT coalesce((SELECT seats_booked + :guestCount::int + :otherHoldSeats::int <= capacity FROM slot), false) AS fits,
         coalesce((SELECT current FROM current_terms), false) AS current,
         coalesce((SELECT clock_timestamp() >= statement_timestamp() + :timeLeftMs::int * interval '1 millisecond'
                     FROM slot WHERE :timeLeftMs::int IS NOT NULL), false) AS late
), go AS MATERIALIZED (
  SELECT 1 FROM verdict WHERE fits AND current AND NOT late
${customer === 'new' ? NEW_CUSTOMER : KNOWN_CUSTOMER}
), booking AS (
  INSERT INTO bookings (id, tenant_id, experience_id, venue_id, slot_id, customer_id, hold_id, hold_expires_at,
                        idempotency_ref, status, guest_count, notes, currency, unit_price_cents,
                        addons_total_cents, total_cents, updated_at)
  SELECT :bookingId::uuid, :tenantId::uuid, :experienceId::uuid, :venueId::uuid, :slotId::uuid, customer.id,
         :holdId::uuid, :holdExpiresAt::timestamptz, :idempotencyRef::text, 'held', :guestCount::int, :notes::text,
         :currency::text, :unitPriceCents::int, :addonsTotalCents::int, :totalCents::int, now()
    FROM customer
  RETURNING id${
    addons
      ? `
), booking_addons AS (
  INSERT INTO booking_addons (booking_id, addon_id, qty, unit_price_cents)
  SELECT booking.id, a.addon_id, a.qty, a.unit_price_cents
    FROM booking, unnest(:addonIds::uuid[], :addonQtys::int[], :addonPrices::int[]) AS a(addon_id, qty, unit_price_cents)`
      : ''
  }
), outbox AS (
  INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, sealed_data, data, traceparent, tracestate)
  SELECT e.id, e.tenant_id, e.name, e.entity_type, e.entity_id, e.schema_version, e.sealed_data, e.data, e.traceparent, e.tracestate
    FROM booking, jsonb_to_recordset(:outbox::jsonb) AS e(id uuid, tenant_id uuid, name text, entity_type text,
                                                      entity_id uuid, schema_version int, sealed_data text, data jsonb,
                                                      traceparent text, tracestate text)
)
SELECT verdict.late, verdict.fits, NOT verdict.current AS stale_terms, booking.id IS NOT NULL AS booked,
       ${customer === 'new' ? EXISTING_CUSTOMER : 'NULL::json'} AS existing_customer
  FROM verdict LEFT JOIN booking ON true`;

/** A new customer: inserted unless one with its email exists after all (answered, to send again for it). */
const NEW_CUSTOMER = `), existing_customer AS MATERIALIZED (
  SELECT id, first_name, last_name, phone FROM customers WHERE tenant_id = :tenantId::uuid AND email = :email::text
), customer AS (
  INSERT INTO customers (id, tenant_id, email, first_name, last_name, phone, updated_at)
  SELECT :customerId::uuid, :tenantId::uuid, :email::text, :firstName::text, :lastName::text, :phone::text, now() FROM go
   WHERE NOT EXISTS (SELECT 1 FROM existing_customer)
  ON CONFLICT (tenant_id, email) DO NOTHING
  RETURNING id`;

const EXISTING_CUSTOMER = `(SELECT json_build_object('id', id, 'firstName', first_name, 'lastName', last_name, 'phone', phone)
          FROM existing_customer)`;

/** A known customer: locked only while still as read, and updated when the contact changed it. */
const KNOWN_CUSTOMER = `), customer AS MATERIALIZED (
  SELECT id FROM customers
   WHERE EXISTS (SELECT 1 FROM go)
     AND id = :customerId::uuid AND tenant_id = :tenantId::uuid AND email = :email::text
     AND first_name = :knownFirstName::text AND last_name IS NOT DISTINCT FROM :knownLastName::text
     AND phone IS NOT DISTINCT FROM :knownPhone::text
     FOR UPDATE
), changed_customer AS (
  UPDATE customers SET first_name = :firstName::text, last_name = coalesce(:lastName::text, last_name),
                       phone = coalesce(:phone::text, phone), updated_at = now()
   WHERE :contactChanged::boolean AND id IN (SELECT id FROM customer)`;

// Every shape is built as the module loads (after the parts above), so a parameter without its
// cast fails the start, not a booking.
const STATEMENTS = new Map<string, BookingStatement>(
  (['new', 'known'] as const).flatMap((customer) =>
    [false, true].map((addons): [string, BookingStatement] => {
      const name = nameOf({ customer, addons });
      return [name, { name, ...numberParameters(sql({ customer, addons })) }];
    }),
  ),
);
