import type { Prisma, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import type { Customer } from './customer-schemas';

/** What every customer read loads: the row and its booking count, counted in the same query. */
export const withBookingCount = { _count: { select: { bookings: true } } } satisfies Prisma.CustomerInclude;

type CustomerRow = Prisma.CustomerGetPayload<{ include: typeof withBookingCount }>;

/** The full record; an anonymised customer shows no personal data at all. */
export function customerView(row: CustomerRow): Customer {
  const anonymised = row.anonymisedAt !== null;
  return {
    id: row.id,
    email: anonymised ? null : row.email,
    first_name: anonymised ? null : row.firstName,
    last_name: anonymised ? null : row.lastName,
    phone: anonymised ? null : row.phone,
    tags: row.tags,
    marketing_opt_in: row.marketingOptIn,
    anonymised,
    anonymised_at: row.anonymisedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    booking_count: row._count.bookings,
  };
}

/**
 * Locks the tenant's customer row for a change decided in this transaction and returns it;
 * another tenant's customer does not exist.
 */
export async function lockCustomer(tx: Tx, tenantId: string, customerId: string) {
  const [locked] = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM customers WHERE id = ${customerId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
  if (!locked) throw new AppError('customer_not_found');
  return tx.customer.findUniqueOrThrow({ where: { id: customerId } });
}
