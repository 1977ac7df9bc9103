import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { LIFECYCLE_JOB } from '../jobs/lifecycle-queue';
import { runLifecycleAt } from '../jobs/run-lifecycle-at';
import { idempotencyFor } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { perIpRateLimit } from '../http/rate-limit';
import { createParser } from '../http/validation';
import { createWalletTopup } from './create-wallet-topup';
import { authenticateOrderToken, getBuyerOrder } from './get-buyer-order';
import { WalletTopupRequest } from './online-order-schemas';

const parseTopup = createParser(WalletTopupRequest);

/**
 * Online orders, for anonymous buyers: a wallet top-up paid with Stripe, rate-limited per IP and
 * honouring Idempotency-Key (a double click buys once), and the buyer's view of it by its token.
 */
export function onlineOrderRoutes(router: IRouter, deps: AppDeps): void {
  const once = idempotencyFor(deps.redis, deps.config);
  router.post(
    '/api/orders/wallet-topups',
    perIpRateLimit(deps.redis, { name: 'orders', perMinute: deps.config.rateLimits.ordersPerMinute }),
    once('wallet-topup'),
    async (req, res) => {
      const topup = await createWalletTopup(deps, parseTopup(req.body));
      await runLifecycleAt(deps, LIFECYCLE_JOB.cancelUnpaidOrders, new Date(topup.pay_by), `order-${topup.order_id}`);
      res.status(201).json(topup);
    },
  );
  router.get('/api/orders/:id', async (req, res) => {
    const orderId = idParam(req, 'order_not_found');
    const tenantId = authenticateOrderToken(deps.config, req.get('X-Order-Token'), orderId);
    res.json(await getBuyerOrder(deps.db, tenantId, orderId));
  });
}
