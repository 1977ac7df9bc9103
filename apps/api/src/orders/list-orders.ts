import type { Db, Prisma } from '@booking/db';
import { AppError } from '@booking/domain';
import type { OrderView, OrdersQuery } from './order-schemas';
import { ORDER_WITH_PARTS, orderView } from './order-view';

/** The tenant's orders, newest first, keyed on (created_at, id); filters combine. */
export async function listOrders(
  db: Db,
  tenantId: string,
  query: OrdersQuery,
): Promise<{ data: OrderView[]; next_starting_after: string | null }> {
  const limit = Number(query.limit ?? 20);
  const after = query.starting_after
    ? await db.order.findFirst({ where: { id: query.starting_after, tenantId }, select: { id: true, createdAt: true } })
    : null;
  if (query.starting_after && !after) throw new AppError('order_not_found', 'starting_after names no order');
  const where: Prisma.OrderWhereInput = {
    tenantId,
    ...(query.status && { status: query.status as OrderView['status'] }),
    ...(query.kind && { kind: query.kind }),
    ...(query.channel && { channel: query.channel }),
    ...(query.customer_id && { customerId: query.customer_id }),
    ...(after && {
      OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
    }),
  };
  const rows = await db.order.findMany({
    where,
    include: ORDER_WITH_PARTS,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  return { data: page.map(orderView), next_starting_after: rows.length > limit ? page[page.length - 1]!.id : null };
}
