import { Router } from 'express';
import type { AppDeps } from '../app-deps';

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(work: Promise<T>): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), CHECK_TIMEOUT_MS).unref()),
  ]);
}

async function check(work: () => Promise<unknown>): Promise<string> {
  try {
    await withTimeout(work());
    return 'ok';
  } catch (error) {
    return error instanceof Error ? error.message : 'failed';
  }
}

/** `/healthz`: the process answers (liveness). `/readyz`: it can reach PostgreSQL and Redis (readiness). */
export function healthRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const [postgres, redis] = await Promise.all([
      check(() => deps.db.$queryRaw`SELECT 1`),
      check(() => deps.redis.ping()),
    ]);
    const ready = postgres === 'ok' && redis === 'ok';
    res
      .status(ready ? 200 : 503)
      .json(
        ready
          ? { status: 'ready', checks: { postgres, redis } }
          : { error: 'service_unavailable', detail: { postgres, redis } },
      );
  });
  return router;
}
