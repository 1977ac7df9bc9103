import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type ErrorRequestHandler } from 'express';
import type { AppDeps } from '../app-deps';
import { requireRole } from '../operators/api-key-auth';

const BASE_PATH = '/api/admin/queues';

/**
 * bull-board over the delivery queue, for admin keys. Browsers get a login prompt: the user name
 * is ignored and the password is the admin API key. The queue is shared by all tenants, so this
 * is an operations tool for whoever runs the service, not a per-tenant view.
 */
export function queueDashboardRoutes(deps: AppDeps): Router {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(BASE_PATH);
  createBullBoard({ queues: [new BullMQAdapter(deps.deliveryQueue, { readOnlyMode: true })], serverAdapter: adapter });

  const promptForKey: ErrorRequestHandler = (error, _req, res, next) => {
    if ((error as { code?: string }).code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Basic realm="queues"');
    next(error);
  };
  const router = Router();
  router.use(BASE_PATH, requireRole(deps.db, 'admin'), adapter.getRouter(), promptForKey);
  router.use(BASE_PATH, promptForKey);
  return router;
}
