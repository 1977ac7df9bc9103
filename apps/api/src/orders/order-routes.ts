import { AppError } from '@booking/domain';
import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor, idempotencyRef, markReplayed } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { listOrders } from './list-orders';
import { OrdersQuery, RefundOrderRequest } from './order-schemas';
import { loadOrderView } from './order-view';
import { refundOrder } from './refund-order';

const parseQuery = createParser(OrdersQuery, 'invalid_query');
const parseRefund = createParser(RefundOrderRequest);
const orderId = (req: Request) => idParam(req, 'order_not_found');

/**
 * Every order of the tenant, online and at the till, for staff; refunds of any order for
 * managers, honouring Idempotency-Key per API key (a retried refund never refunds twice).
 */
export function orderRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');
  const byApiKey = (req: Request) => operatorOf(req).keyId;
  const once = idempotencyFor(deps.redis, deps.config);

  router.get('/api/v1/orders', staff, async (req, res) => {
    res.json(await listOrders(deps.db, operatorOf(req).tenantId, parseQuery(req.query)));
  });
  router.get('/api/v1/orders/:id', staff, async (req, res) => {
    const order = await loadOrderView(deps.db, orderId(req), operatorOf(req).tenantId);
    if (!order) throw new AppError('order_not_found');
    res.json(order);
  });
  router.post('/api/v1/orders/:id/refunds', manager, once('order-refund', byApiKey), async (req, res) => {
    const { refund, replayed } = await refundOrder(
      deps,
      operatorOf(req),
      orderId(req),
      parseRefund(req.body),
      idempotencyRef(res),
    );
    if (replayed) markReplayed(res);
    res.status(201).json(refund);
  });
}
