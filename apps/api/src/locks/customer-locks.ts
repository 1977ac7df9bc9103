import type { Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { claimLock } from './lock-order';

/**
 * Locks the tenant's customer row for a change decided in this transaction and returns it;
 * another tenant's customer is 404 customer_not_found.
 */
export async function lockCustomer(tx: Tx, tenantId: string, customerId: string) {
  claimLock(tx, 'customer');
  const [locked] = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM customers WHERE id = ${customerId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (!locked) throw new AppError('customer_not_found');
  return tx.customer.findUniqueOrThrow({ where: { id: customerId } });
}

/** Locks the tenant's customer with this email (unique per tenant), for an upsert. */
export async function lockCustomerByEmail(
  tx: Tx,
  tenantId: string,
  email: string,
): Promise<{ id: string; firstName: string; lastName: string | null; phone: string | null } | undefined> {
  claimLock(tx, 'customer');
  const [row] = await tx.$queryRaw<
    { id: string; first_name: string; last_name: string | null; phone: string | null }[]
  >`
    SELECT id, first_name, last_name, phone FROM customers
    WHERE tenant_id = ${tenantId}::uuid AND email = ${email} FOR UPDATE`;
  return row && { id: row.id, firstName: row.first_name, lastName: row.last_name, phone: row.phone };
}
