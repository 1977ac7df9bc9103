import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor, idempotencyRef, markReplayed } from '../http/idempotency';
import { perIpRateLimit } from '../http/rate-limit';
import { createParser } from '../http/validation';
import { BookingRequest } from './booking-schemas';
import { createBooking } from './create-booking';
import { guestCountCode } from './guest-count-code';

const parseBookingRequest = createParser(BookingRequest, guestCountCode);

export function bookingRoutes(router: IRouter, deps: AppDeps): void {
  const once = idempotencyFor(deps.redis, deps.config);
  router.post(
    '/api/bookings',
    perIpRateLimit(deps.redis, { name: 'bookings', perMinute: deps.config.rateLimits.bookingsPerMinute }),
    once('booking'),
    async (req, res) => {
      const { booking, replayed } = await createBooking(deps, parseBookingRequest(req.body), idempotencyRef(res));
      if (replayed) markReplayed(res);
      res.status(201).json(booking);
    },
  );
}
