import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotent } from '../http/idempotency';
import { perIpRateLimit } from '../http/rate-limit';
import { createParser } from '../http/validation';
import { BookingRequest } from './booking-schemas';
import { createBooking } from './create-booking';

// A guest count outside 1..200 is the spec's invalid_guest_count rather than a generic body error.
const parseBookingRequest = createParser(BookingRequest, (problems) =>
  problems.every((problem) => problem.field === '/guest_count') ? 'invalid_guest_count' : 'invalid_body',
);

export function bookingRoutes(deps: AppDeps): Router {
  const router = Router();
  router.post(
    '/api/bookings',
    perIpRateLimit(deps.redis, { name: 'bookings', perMinute: deps.config.rateLimits.bookingsPerMinute }),
    idempotent(deps.redis, { scope: 'booking', ttlSeconds: deps.config.idempotencyTtlSeconds }),
    async (req, res) => {
      res.status(201).json(await createBooking(deps, parseBookingRequest(req.body)));
    },
  );
  return router;
}
