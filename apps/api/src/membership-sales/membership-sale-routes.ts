import type { IRouter, Request } from 'express';
import type { AppDeps } from '../app-deps';
import { LIFECYCLE_JOB } from '../jobs/lifecycle-queue';
import { runLifecycleAt } from '../jobs/run-lifecycle-at';
import { idempotencyFor } from '../http/idempotency';
import { perIpRateLimit } from '../http/rate-limit';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { buyMembership } from './buy-membership';
import { importMemberships } from './import-memberships';
import { ImportRequest, MembershipPurchaseRequest } from './sale-schemas';

const parsePurchase = createParser(MembershipPurchaseRequest);
const parseImport = createParser(ImportRequest);

/**
 * Selling memberships: the anonymous online purchase (rate-limited per IP in the same budget as
 * the other online orders, honouring Idempotency-Key so a double click buys once), and an
 * admin's import of existing members.
 */
export function membershipSaleRoutes(router: IRouter, deps: AppDeps): void {
  const once = idempotencyFor(deps.redis, deps.config);
  const admin = requireRole(deps.db, 'admin');
  const byApiKey = (req: Request) => operatorOf(req).keyId;
  router.post(
    '/api/orders/memberships',
    perIpRateLimit(deps.redis, { name: 'orders', perMinute: deps.config.rateLimits.ordersPerMinute }),
    once('membership-purchase'),
    async (req, res) => {
      const purchase = await buyMembership(deps, parsePurchase(req.body));
      await runLifecycleAt(
        deps,
        LIFECYCLE_JOB.cancelUnpaidOrders,
        new Date(purchase.pay_by),
        `order-${purchase.order_id}`,
      );
      res.status(201).json(purchase);
    },
  );
  router.post('/api/v1/memberships/imports', admin, once('membership-import', byApiKey), async (req, res) => {
    res.json(await importMemberships(deps.db, operatorOf(req), parseImport(req.body)));
  });
}
