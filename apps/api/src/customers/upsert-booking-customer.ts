import { randomUUID } from 'node:crypto';
import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import { lockCustomerByEmail } from '../locks';
import { normaliseEmail } from './customer-email';

export interface CustomerContact {
  firstName: string;
  lastName?: string;
  phone?: string;
}

/** What made a customer, for customer.created: a new booking, a booking transferred to them, or an online order. */
export type CustomerSource = 'booking' | 'transfer' | 'order';

/**
 * The contact fields a booking's contact changes on an existing customer: the first name always
 * counts, a last name or phone only when given.
 */
export function changedContactFields(
  customer: { firstName: string; lastName: string | null; phone: string | null },
  contact: CustomerContact,
): string[] {
  return [
    contact.firstName !== customer.firstName && 'first_name',
    contact.lastName !== undefined && contact.lastName !== customer.lastName && 'last_name',
    contact.phone !== undefined && contact.phone !== customer.phone && 'phone',
  ].filter((field): field is string => field !== false);
}

/** The customer.created event of a customer a booking (or transfer, or order) made. */
export function customerCreatedEvent(tenantId: string, customerId: string, source: CustomerSource) {
  return {
    tenantId,
    name: 'customer.created' as const,
    entityType: 'customer' as const,
    entityId: customerId,
    fields: { customer_id: customerId, source },
  };
}

/** The customer.updated event naming the contact fields that changed. */
export function customerUpdatedEvent(tenantId: string, customerId: string, changedFields: string[]) {
  return {
    tenantId,
    name: 'customer.updated' as const,
    entityType: 'customer' as const,
    entityId: customerId,
    fields: { customer_id: customerId, changed_fields: changedFields },
  };
}

/**
 * The tenant's customer for an email, made or refreshed by a booking: one per (tenant, email),
 * the email normalised here whatever the caller sent.
 * A new customer records customer.created; a changed name or phone records customer.updated
 * with the fields that changed (receivers read the contact itself at delivery time).
 * INSERT ... ON CONFLICT keeps two first bookings by one new email from failing each other.
 * (A plain booking does the same in its one statement: see insert-booking-statement.)
 */
export async function upsertBookingCustomer(
  tx: Tx,
  tenantId: string,
  sentEmail: string,
  contact: CustomerContact,
  source: CustomerSource = 'booking',
): Promise<string> {
  const email = normaliseEmail(sentEmail);
  const [inserted] = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO customers (id, tenant_id, email, first_name, last_name, phone, updated_at)
    VALUES (${randomUUID()}::uuid, ${tenantId}::uuid, ${email}, ${contact.firstName}, ${contact.lastName ?? null}, ${contact.phone ?? null}, now())
    ON CONFLICT (tenant_id, email) DO NOTHING
    RETURNING id`;
  if (inserted) {
    await recordEvent(tx, customerCreatedEvent(tenantId, inserted.id, source));
    return inserted.id;
  }

  const customer = (await lockCustomerByEmail(tx, tenantId, email))!;
  const changed = changedContactFields(customer, contact);
  if (changed.length > 0) {
    await tx.customer.update({
      where: { id: customer.id },
      data: { firstName: contact.firstName, lastName: contact.lastName, phone: contact.phone },
    });
    await recordEvent(tx, customerUpdatedEvent(tenantId, customer.id, changed));
  }
  return customer.id;
}
