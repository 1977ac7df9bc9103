import { AppError } from '@booking/domain';
import type { IRouter } from 'express';
import type { Logger } from 'pino';
import type { AppDeps } from '../app-deps';
import type { Liveness, Readiness } from './health-schemas';

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref()),
  ]);
}

/**
 * `ok` or `down`. Why it is down stays in the log: driver messages name hosts, ports, users and
 * databases, and /readyz answers anyone who can reach it.
 */
async function check(name: string, log: Logger, work: () => Promise<unknown>): Promise<'ok' | 'down'> {
  try {
    await withTimeout(work());
    return 'ok';
  } catch (error) {
    log.warn({ err: error, check: name }, 'readiness check failed');
    return 'down';
  }
}

/**
 * `/healthz`: the process answers (liveness). `/readyz`: it can reach PostgreSQL and Redis and is
 * not draining (readiness).
 */
export function healthRoutes(router: IRouter, deps: AppDeps): void {
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' } satisfies Liveness);
  });
  router.get('/readyz', async (req, res) => {
    // Out of rotation before the listener closes: see Drain.
    if (deps.drain.draining) throw new AppError('service_unavailable', { draining: true });
    const [postgres, redis] = await Promise.all([
      check('postgres', req.log, () => deps.db.$queryRaw`SELECT 1`),
      check('redis', req.log, () => deps.redis.ping()),
    ]);
    if (postgres !== 'ok' || redis !== 'ok') throw new AppError('service_unavailable', { postgres, redis });
    res.json({ status: 'ready', checks: { postgres, redis } } satisfies Readiness);
  });
}
