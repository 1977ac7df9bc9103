import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import type { Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { lockOrderUnlessBusy } from '../locks';
import { refundVoidedCardTenders } from './refund-voided-card-tenders';
import { voidLockedOrder, voidOrderAndRefund } from './void-pos-order';

const BATCH = 50;

/**
 * Voids till orders left open longer than POS_ORDER_HOLD_HOURS, so their wallet and gift card
 * holds do not keep value from their owners forever, and retries card refunds of voids that the
 * provider refused. One batch; each order in its own transaction, locked SKIP LOCKED and still
 * open, so several worker pods never void one order twice. Returns how many it voided.
 */
export async function voidAbandonedOrders(
  deps: { db: Db; stripe: Stripe | null; config: Config; logger: Logger },
  now = new Date(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - deps.config.orders.posHoldHours * 3_600_000);
  const abandoned = await deps.db.order.findMany({
    where: { channel: 'pos', status: 'open', createdAt: { lte: cutoff } },
    select: { id: true },
    orderBy: { createdAt: 'asc' },
    take: BATCH,
  });
  let voided = 0;
  for (const { id } of abandoned) {
    const done = await voidOrderAndRefund(
      deps,
      async (tx) => {
        const order = await lockOrderUnlessBusy(tx, id);
        if (!order || order.status !== 'open') return false;
        await voidLockedOrder(tx, order, null);
        return true;
      },
      id,
    );
    if (done) voided += 1;
  }
  if (deps.stripe) {
    const stuck = await deps.db.orderRefund.findMany({
      where: { source: 'void', status: 'pending', createdAt: { lte: new Date(now.getTime() - 60_000) } },
      select: { orderId: true },
      distinct: ['orderId'],
      orderBy: { createdAt: 'asc' },
      take: BATCH,
    });
    // One refund the provider keeps refusing must not hold back the others: it stays pending,
    // is logged, and is asked for again on the next run.
    for (const { orderId } of stuck) {
      await refundVoidedCardTenders({ db: deps.db, stripe: deps.stripe }, orderId).catch((error: unknown) =>
        deps.logger.warn({ err: error, order_id: orderId }, 'void refund refused by the provider; retried next run'),
      );
    }
  }
  return voided;
}
