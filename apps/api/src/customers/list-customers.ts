import type { Db, Prisma } from '@booking/db';
import { AppError } from '@booking/domain';
import { normaliseEmail } from './customer-email';
import type { Customer } from './customer-schemas';
import { customerView, withBookingCount } from './customer-view';

export interface CustomerPage {
  limit: number;
  startingAfter?: string;
  email?: string;
}

/**
 * The tenant's customers, oldest first. Pages are keyed on (created_at, id), so customers made
 * in the same millisecond are neither skipped nor repeated, and customers added meanwhile land
 * on later pages. Emails are stored trimmed and lower-case (by bookings and by updates), so the
 * case-insensitive filter is an exact match on the normalised address, served by the
 * (tenant_id, email) index. Anonymised customers have no email to match.
 */
export async function listCustomers(
  db: Db,
  tenantId: string,
  page: CustomerPage,
): Promise<{ data: Customer[]; next_starting_after: string | null }> {
  const after = page.startingAfter
    ? await db.customer.findFirst({
        where: { id: page.startingAfter, tenantId },
        select: { id: true, createdAt: true },
      })
    : null;
  if (page.startingAfter && !after) throw new AppError('customer_not_found', 'starting_after names no customer');

  const where: Prisma.CustomerWhereInput = {
    tenantId,
    ...(page.email !== undefined && { email: normaliseEmail(page.email), anonymisedAt: null }),
    ...(after && {
      OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }],
    }),
  };
  // One row more than the page tells whether another page follows.
  const rows = await db.customer.findMany({
    where,
    include: withBookingCount,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: page.limit + 1,
  });
  const customers = rows.slice(0, page.limit);
  return {
    data: customers.map(customerView),
    next_starting_after: rows.length > page.limit ? customers[customers.length - 1]!.id : null,
  };
}
