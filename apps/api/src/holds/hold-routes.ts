import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotent } from '../http/idempotency';
import { perIpRateLimit } from '../http/rate-limit';
import { createParser } from '../http/validation';
import { HoldRequest } from './hold-schemas';
import { placeHold } from './place-hold';

const parseHoldRequest = createParser(HoldRequest);

export function holdRoutes(deps: AppDeps): Router {
  const router = Router();
  router.post(
    '/api/bookings/hold',
    perIpRateLimit(deps.redis, { name: 'holds', perMinute: deps.config.rateLimits.holdsPerMinute }),
    idempotent(deps.redis, { scope: 'hold', ttlSeconds: deps.config.idempotencyTtlSeconds }),
    async (req, res) => {
      res.status(200).json(await placeHold(deps, parseHoldRequest(req.body)));
    },
  );
  return router;
}
