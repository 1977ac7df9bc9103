import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor, idempotencyRef, markReplayed } from '../http/idempotency';
import { perIpRateLimit } from '../http/rate-limit';
import { createParser } from '../http/validation';
import { HoldRequest } from './hold-schemas';
import { HOLD_RECORD_GRACE_SECONDS } from './hold-store';
import { placeHold } from './place-hold';

const parseHoldRequest = createParser(HoldRequest);

export function holdRoutes(router: IRouter, deps: AppDeps): void {
  const once = idempotencyFor(deps.redis, deps.config);
  router.post(
    '/api/bookings/hold',
    perIpRateLimit(deps.redis, { name: 'holds', perMinute: deps.config.rateLimits.holdsPerMinute }),
    // A retried hold finds the hold its first run placed (placeHold), so its answer is rebuilt
    // rather than stored.
    once('hold', undefined, { rebuildsAnswers: { forSeconds: HOLD_RECORD_GRACE_SECONDS } }),
    async (req, res) => {
      const { hold, replayed } = await placeHold(deps, parseHoldRequest(req.body), idempotencyRef(res));
      if (replayed) markReplayed(res);
      res.status(200).json(hold);
    },
  );
}
