/**
 * The bare booking ceiling: a node:http server doing the booking's necessary work in PostgreSQL
 * the simplest fast way: ONE prepared statement on raw `pg` (its own transaction) that locks the
 * slot row (FOR NO KEY UPDATE) where the seats fit its capacity, inserts the customer (ON
 * CONFLICT for a returning email), the booking, and the outbox rows (customer.created,
 * booking.created): the same tables and columns as the API's booking, which, like it, leaves the
 * relay to find them at its next poll. Its pool is the API's default size (DB_POOL_SIZE 10).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { EVENT_SCHEMA_VERSIONS } from '@booking/events';
import { Pool } from 'pg';

interface BookingBody {
  hold_id: string;
  slot_id: string;
  experience_id: string;
  venue_id: string;
  guest_count: number;
  customer: { email: string; first_name: string };
}

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const BOOK = {
  name: 'book',
  text: `
WITH slot AS MATERIALIZED (
  SELECT 1 FROM slots
   WHERE id = $2::uuid AND tenant_id = $1::uuid AND seats_booked + $3::int <= capacity
     FOR NO KEY UPDATE
), customer AS (
  INSERT INTO customers (id, tenant_id, email, first_name, updated_at)
  SELECT $4::uuid, $1::uuid, $5::text, $6::text, now() FROM slot
  ON CONFLICT (tenant_id, email) DO UPDATE SET first_name = EXCLUDED.first_name
  RETURNING id, (xmax = 0) AS created
), booking AS (
  INSERT INTO bookings (id, tenant_id, experience_id, venue_id, slot_id, customer_id, hold_id, status, guest_count,
                        currency, unit_price_cents, addons_total_cents, total_cents, hold_expires_at, updated_at)
  SELECT $7::uuid, $1::uuid, $8::uuid, $9::uuid, $2::uuid, customer.id, $10::uuid, 'held', $3::int,
         $11::text, $12::int, 0, $12::int * $3::int, now() + interval '10 minutes', now()
    FROM customer
  RETURNING id
), customer_event AS (
  INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data)
  SELECT $13::uuid, $1::uuid, 'customer.created', 'customer', customer.id, $14::int,
         jsonb_build_object('event_id', $13::uuid, 'schema_version', $14::int, 'entity_type', 'customer',
                            'entity_id', customer.id, 'customer_id', customer.id, 'source', 'booking')
    FROM customer WHERE customer.created
), booking_event AS (
  INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data)
  SELECT $15::uuid, $1::uuid, 'booking.created', 'booking', booking.id, $16::int, $17::jsonb FROM booking
)
SELECT booking.id FROM booking`,
};

interface Experience {
  tenantId: string;
  venueId: string;
  currency: string;
  basePriceCents: number;
}
const experiences = new Map<string, Experience>();

/** The experience's terms, read once: the ceiling prices a booking without a round trip. */
async function experience(id: string): Promise<Experience> {
  let found = experiences.get(id);
  if (!found) {
    const { rows } = await pool.query<{
      tenant_id: string;
      venue_id: string;
      currency: string;
      base_price_cents: number;
    }>('SELECT tenant_id, venue_id, currency, base_price_cents FROM experiences WHERE id = $1', [id]);
    const row = rows[0]!;
    found = {
      tenantId: row.tenant_id,
      venueId: row.venue_id,
      currency: row.currency,
      basePriceCents: row.base_price_cents,
    };
    experiences.set(id, found);
  }
  return found;
}

async function book(body: BookingBody): Promise<{ status: number; answer: object }> {
  const terms = await experience(body.experience_id);
  const email = body.customer.email.trim().toLowerCase();
  const bookingId = randomUUID();
  const bookingEventId = randomUUID();
  const bookingVersion = EVENT_SCHEMA_VERSIONS['booking.created'];
  const { rowCount } = await pool.query({
    ...BOOK,
    values: [
      terms.tenantId,
      body.slot_id,
      body.guest_count,
      randomUUID(),
      email,
      body.customer.first_name,
      bookingId,
      body.experience_id,
      terms.venueId,
      body.hold_id,
      terms.currency,
      terms.basePriceCents,
      randomUUID(),
      EVENT_SCHEMA_VERSIONS['customer.created'],
      bookingEventId,
      bookingVersion,
      {
        event_id: bookingEventId,
        schema_version: bookingVersion,
        entity_type: 'booking',
        entity_id: bookingId,
        booking_id: bookingId,
        experience_id: body.experience_id,
        venue_id: terms.venueId,
        slot_id: body.slot_id,
        customer_email: email,
        guest_count: body.guest_count,
      },
    ],
  });
  if (rowCount === 0) return { status: 409, answer: { error: 'capacity_exceeded' } };
  return {
    status: 201,
    answer: { booking_id: bookingId, status: 'held', total_cents: terms.basePriceCents * body.guest_count },
  };
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    book(JSON.parse(Buffer.concat(chunks).toString('utf8')) as BookingBody).then(
      ({ status, answer }) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
      (error: unknown) => {
        console.error(error);
        res.writeHead(500).end();
      },
    );
  });
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
process.once('SIGTERM', () => void pool.end().finally(() => process.exit(0)));
