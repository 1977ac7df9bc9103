/**
 * The bare booking ceiling: a node:http server doing, on raw `pg` with prepared statements, the
 * one transaction a booking needs: lock the slot row (FOR NO KEY UPDATE), check its capacity,
 * insert the customer (ON CONFLICT for a returning email), the booking, and the outbox rows
 * (customer.created, booking.created) with the relay's NOTIFY; the same tables and columns as
 * the API's booking. Its pool is the API's default size (DB_POOL_SIZE 10).
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { EVENT_SCHEMA_VERSIONS, OUTBOX_CHANNEL } from '@booking/events';
import { Pool, type PoolClient } from 'pg';

interface BookingBody {
  hold_id: string;
  slot_id: string;
  experience_id: string;
  venue_id: string;
  guest_count: number;
  customer: { email: string; first_name: string };
}

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

const LOCK_SLOT = {
  name: 'lock-slot',
  text: 'SELECT capacity, seats_booked FROM slots WHERE id = $1 AND tenant_id = $2 FOR NO KEY UPDATE',
};
const INSERT_CUSTOMER = {
  name: 'insert-customer',
  text: `INSERT INTO customers (id, tenant_id, email, first_name, updated_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (tenant_id, email) DO UPDATE SET first_name = EXCLUDED.first_name RETURNING id, (xmax = 0) AS created`,
};
const INSERT_BOOKING = {
  name: 'insert-booking',
  text: `INSERT INTO bookings (id, tenant_id, experience_id, venue_id, slot_id, customer_id, hold_id, status, guest_count,
           currency, unit_price_cents, addons_total_cents, total_cents, hold_expires_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'held', $8, $9, $10, 0, $11, now() + interval '10 minutes', now())`,
};
const INSERT_EVENT = {
  name: 'insert-event',
  text: `INSERT INTO events (id, tenant_id, name, entity_type, entity_id, schema_version, data) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
};
const NOTIFY = { name: 'notify', text: 'SELECT pg_notify($1, $2)' };

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

async function event(
  client: PoolClient,
  tenantId: string,
  name: keyof typeof EVENT_SCHEMA_VERSIONS,
  entityType: string,
  entityId: string,
  fields: object,
) {
  const id = randomUUID();
  const version = EVENT_SCHEMA_VERSIONS[name];
  const data = { event_id: id, schema_version: version, entity_type: entityType, entity_id: entityId, ...fields };
  await client.query({ ...INSERT_EVENT, values: [id, tenantId, name, entityType, entityId, version, data] });
}

async function book(body: BookingBody): Promise<{ status: number; answer: object }> {
  const terms = await experience(body.experience_id);
  const email = body.customer.email.trim().toLowerCase();
  const bookingId = randomUUID();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ capacity: number; seats_booked: number }>({
      ...LOCK_SLOT,
      values: [body.slot_id, terms.tenantId],
    });
    const slot = rows[0];
    if (!slot || slot.seats_booked + body.guest_count > slot.capacity) {
      await client.query('ROLLBACK');
      return { status: 409, answer: { error: 'capacity_exceeded' } };
    }
    const customer = await client.query<{ id: string; created: boolean }>({
      ...INSERT_CUSTOMER,
      values: [randomUUID(), terms.tenantId, email, body.customer.first_name],
    });
    const { id: customerId, created } = customer.rows[0]!;
    if (created)
      await event(client, terms.tenantId, 'customer.created', 'customer', customerId, {
        customer_id: customerId,
        source: 'booking',
      });
    const total = terms.basePriceCents * body.guest_count;
    await client.query({
      ...INSERT_BOOKING,
      values: [
        bookingId,
        terms.tenantId,
        body.experience_id,
        terms.venueId,
        body.slot_id,
        customerId,
        body.hold_id,
        body.guest_count,
        terms.currency,
        terms.basePriceCents,
        total,
      ],
    });
    await event(client, terms.tenantId, 'booking.created', 'booking', bookingId, {
      booking_id: bookingId,
      experience_id: body.experience_id,
      venue_id: terms.venueId,
      slot_id: body.slot_id,
      customer_email: email,
      guest_count: body.guest_count,
    });
    await client.query({ ...NOTIFY, values: [OUTBOX_CHANNEL, ''] });
    await client.query('COMMIT');
    return { status: 201, answer: { booking_id: bookingId, status: 'held', total_cents: total } };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
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
