import { randomUUID } from 'node:crypto';
import { parameterValues, type PgPool } from '@booking/db';
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
import { insertBookingStatement } from './insert-booking-statement';
import { bookingCreatedEvent, type NewBooking } from './new-booking';
import type { KnownCustomer } from './booking-terms';
import type { PreparedBooking } from './prepare-booking';

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
  late: boolean;
  fits: boolean;
  stale_terms: boolean;
  booked: boolean;
  existing_customer: KnownCustomer | null;
}

/**
 * Writes `booking` in one statement (see insert-booking-statement). A customer found by the statement when none was expected
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
  // Past the deadline already, the pool refuses the statement itself (refuseStatementPastDeadline).
  const left = timeLeftMs();
  const statement = insertBookingStatement({
    customer: customer.mode === 'new' ? 'new' : 'known',
    addons: prepared.addons.length > 0,
  });
  const verdict = await runStatement(pool, {
    name: statement.name,
    text: statement.text,
    values: parameterValues(statement, {
      tenantId: booking.tenantId,
      slotId: booking.slotId,
      guestCount: booking.guestCount,
      otherHoldSeats: prepared.otherHoldSeats,
      holdId: booking.holdId,
      customerId: customer.id,
      email: prepared.email,
      firstName: contact.firstName,
      lastName: contact.lastName ?? null,
      phone: contact.phone ?? null,
      contactChanged: customer.mode === 'changed',
      knownFirstName: customer.known?.firstName ?? null,
      knownLastName: customer.known?.lastName ?? null,
      knownPhone: customer.known?.phone ?? null,
      bookingId: booking.id,
      experienceId: booking.experienceId,
      venueId: booking.venueId,
      holdExpiresAt: booking.holdExpiresAt,
      idempotencyRef: booking.idempotencyRef ?? null,
      notes: booking.notes ?? null,
      currency: booking.currency,
      unitPriceCents: booking.unitPriceCents,
      addonsTotalCents: booking.addonsTotalCents,
      totalCents: booking.totalCents,
      addonIds: prepared.addons.map((addon) => addon.addonId),
      addonQtys: prepared.addons.map((addon) => addon.qty),
      addonPrices: prepared.addons.map((addon) => addon.unitPriceCents),
      outbox: outboxRows(events),
      timeLeftMs: left === undefined ? null : Math.floor(left),
      basePriceCents: terms.basePriceCents,
      slotPriceCents: terms.slotPriceCents,
      requiresWaiver: terms.requiresWaiver,
      startsAt: terms.startsAt,
      endsAt: terms.endsAt,
    }),
  });
  if (verdict.late) throw deadlinePassed('the request deadline passed while the booking waited for its slot');
  return { ...verdict, customerId: customer.id };
}

/**
 * Runs the statement. A hold that already has a booking fails it on bookings.hold_id's unique
 * index (an earlier conversion, or a concurrent one that committed first): `hold_not_found`, with
 * nothing written. pool.query then closes the connection, as after any failed statement; that is
 * rare (a double submit, or a retry before Redis learnt of the booking), so no check runs first.
 */
async function runStatement(pool: PgPool, query: { name: string; text: string; values: unknown[] }): Promise<Verdict> {
  try {
    return (await pool.query<Verdict>(query)).rows[0]!;
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    if (code === '23505' && /hold_id/.test(constraint ?? '')) throw new AppError('hold_not_found');
    throw error;
  }
}
