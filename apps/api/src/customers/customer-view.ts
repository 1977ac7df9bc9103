import type { Prisma } from '@booking/db';
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
