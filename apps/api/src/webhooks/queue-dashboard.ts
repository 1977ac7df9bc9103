import { createHash, timingSafeEqual } from 'node:crypto';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { AppError } from '@booking/domain';
import type { IRouter, RequestHandler } from 'express';
import type { AppDeps } from '../app-deps';

const BASE_PATH = '/api/admin/queues';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Basic auth against QUEUE_DASHBOARD_PASSWORD (any user name), so a browser shows its own login
 * prompt. Compared as digests, in constant time.
 */
function requirePassword(password: string): RequestHandler {
  const expected = digest(password);
  return (req, res, next) => {
    const [scheme, credentials] = (req.get('Authorization') ?? '').split(' ');
    const decoded =
      scheme?.toLowerCase() === 'basic' && credentials ? Buffer.from(credentials, 'base64').toString('utf8') : '';
    const given = decoded.slice(decoded.indexOf(':') + 1);
    if (decoded === '' || !timingSafeEqual(digest(given), expected)) {
      res.setHeader('WWW-Authenticate', 'Basic realm="queues"');
      throw new AppError('unauthorized');
    }
    next();
  };
}

/**
 * bull-board over the delivery queue (read-only). The queue is shared by every tenant, so this
 * is for whoever runs the service and takes its own password, not a tenant's API key. Without
 * QUEUE_DASHBOARD_PASSWORD it is not served at all.
 */
export function queueDashboardRoutes(router: IRouter, deps: AppDeps): void {
  const password = deps.config.queueDashboardPassword;
  if (!password) return;
  const adapter = new ExpressAdapter();
  adapter.setBasePath(BASE_PATH);
  createBullBoard({ queues: [new BullMQAdapter(deps.deliveryQueue, { readOnlyMode: true })], serverAdapter: adapter });
  router.use(BASE_PATH, requirePassword(password), adapter.getRouter());
}
