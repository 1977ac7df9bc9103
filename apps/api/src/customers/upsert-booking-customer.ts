import { randomUUID } from 'node:crypto';
import type { Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import { lockCustomerByEmail } from '../locks';

export interface CustomerContact {
  firstName: string;
  lastName?: string;
  phone?: string;
}

/**
 * The tenant's customer for an email, made or refreshed by a booking: one per (tenant, email).
 * A new customer records customer.created; a changed name or phone records customer.updated
 * with the fields that changed (receivers read the contact itself at delivery time).
 * INSERT ... ON CONFLICT keeps two first bookings by one new email from failing each other.
 */
export async function upsertBookingCustomer(
  tx: Tx,
  tenantId: string,
  email: string,
  contact: CustomerContact,
  /** What made the customer, for customer.created: a new booking, a booking transferred to them, or an online order. */
  source: 'booking' | 'transfer' | 'order' = 'booking',
): Promise<string> {
  const [inserted] = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO customers (id, tenant_id, email, first_name, last_name, phone, updated_at)
    VALUES (${randomUUID()}::uuid, ${tenantId}::uuid, ${email}, ${contact.firstName}, ${contact.lastName ?? null}, ${contact.phone ?? null}, now())
    ON CONFLICT (tenant_id, email) DO NOTHING
    RETURNING id`;
  if (inserted) {
    await recordEvent(tx, {
      tenantId,
      name: 'customer.created',
      entityType: 'customer',
      entityId: inserted.id,
      fields: { customer_id: inserted.id, source },
    });
    return inserted.id;
  }

  const customer = (await lockCustomerByEmail(tx, tenantId, email))!;
  const changed = [
    contact.firstName !== customer.firstName && 'first_name',
    contact.lastName !== undefined && contact.lastName !== customer.lastName && 'last_name',
    contact.phone !== undefined && contact.phone !== customer.phone && 'phone',
  ].filter((field): field is string => field !== false);
  if (changed.length > 0) {
    await tx.customer.update({
      where: { id: customer.id },
      data: { firstName: contact.firstName, lastName: contact.lastName, phone: contact.phone },
    });
    await recordEvent(tx, {
      tenantId,
      name: 'customer.updated',
      entityType: 'customer',
      entityId: customer.id,
      fields: { customer_id: customer.id, changed_fields: changed },
    });
  }
  return customer.id;
}
