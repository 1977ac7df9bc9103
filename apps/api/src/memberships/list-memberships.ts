import type { Db, Prisma } from '@booking/db';
import { AppError } from '@booking/domain';
import type { MembershipsQuery } from './membership-schemas';
import { membershipSummary } from './membership-view';

/** The tenant's memberships, oldest first, keyed on (created_at, id) like every list of the v1 API. */
export async function listMemberships(db: Db, tenantId: string, query: MembershipsQuery) {
  const limit = Number(query.limit ?? 20);
  const after = query.starting_after
    ? await db.membership.findFirst({
        where: { id: query.starting_after, tenantId },
        select: { id: true, createdAt: true },
      })
    : null;
  if (query.starting_after && !after) throw new AppError('membership_not_found', 'starting_after names no membership');
  const where: Prisma.MembershipWhereInput = {
    tenantId,
    ...(query.status && { status: query.status }),
    ...(query.plan_id && { planId: query.plan_id }),
    ...(query.customer_id && { OR: [{ customerId: query.customer_id }, { holderCustomerId: query.customer_id }] }),
    ...(after && {
      AND: [{ OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] }],
    }),
  };
  const rows = await db.membership.findMany({ where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit + 1 });
  const page = rows.slice(0, limit);
  return {
    data: page.map(membershipSummary),
    next_starting_after: rows.length > limit ? page[page.length - 1]!.id : null,
  };
}
