import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { assertRole, operatorOf, requireRole } from '../operators/api-key-auth';
import { addTender } from './add-tender';
import { openPosOrder } from './open-pos-order';
import { AddTenderRequest, OpenPosOrderRequest, SettlePosOrderRequest } from './pos-order-schemas';
import { settlePosOrder } from './settle-pos-order';
import { voidPosOrder } from './void-pos-order';

const parseOpen = createParser(OpenPosOrderRequest);
const parseTender = createParser(AddTenderRequest);
const parseSettle = createParser(SettlePosOrderRequest);
const orderId = (req: Request) => idParam(req, 'order_not_found');

/**
 * Retail orders at the till (staff+): open an order, add tenders (wallet and gift card value is
 * held), settle or void it. Confirming an order unpaid needs a manager. Opening and tendering
 * honour Idempotency-Key per API key: a till retrying after a lost answer does not add twice.
 */
export function posOrderRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const byApiKey = (req: Request) => operatorOf(req).keyId;
  const once = idempotencyFor(deps.redis, deps.config);

  router.post('/api/pos/orders', staff, once('pos-order', byApiKey), async (req, res) => {
    res.status(201).json(await openPosOrder(deps, operatorOf(req), parseOpen(req.body)));
  });
  router.post('/api/pos/orders/:id/tenders', staff, once('pos-order-tender', byApiKey), async (req, res) => {
    res.status(201).json(await addTender(deps, operatorOf(req), orderId(req), parseTender(req.body)));
  });
  router.post('/api/pos/orders/:id/settle', staff, async (req, res) => {
    const operator = operatorOf(req);
    const id = orderId(req);
    const { unpaid = false } = parseSettle(req.body ?? {});
    if (unpaid) assertRole(operator, 'manager', 'confirming an order unpaid');
    res.json(await settlePosOrder(deps, operator, id, { unpaid }));
  });
  router.post('/api/pos/orders/:id/void', staff, async (req, res) => {
    res.json(await voidPosOrder(deps, operatorOf(req), orderId(req)));
  });
}
