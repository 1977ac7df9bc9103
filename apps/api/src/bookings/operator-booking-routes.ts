import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { bookingIdParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { bookingQrSvg } from './booking-qr';
import {
  CheckInByTokenRequest,
  type CancelBookingResponse,
  type CheckInResponse,
  type OperatorBooking,
} from './booking-schemas';
import { cancelBooking } from './cancel-booking';
import { checkInBooking, checkInByToken } from './check-in-booking';
import { getBooking } from './get-booking';

const parseCheckInByToken = createParser(CheckInByTokenRequest);

/** Operator actions on bookings, with tenant API keys: staff check in and look up, managers cancel. */
export function operatorBookingRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');

  router.post('/api/bookings/check-in-by-token', staff, async (req, res) => {
    res.json(
      (await checkInByToken(deps, operatorOf(req), parseCheckInByToken(req.body).token)) satisfies CheckInResponse,
    );
  });
  router.get('/api/bookings/:id', staff, async (req, res) => {
    res.json((await getBooking(deps, operatorOf(req).tenantId, bookingIdParam(req))) satisfies OperatorBooking);
  });
  router.get('/api/bookings/:id/qr.svg', staff, async (req, res) => {
    // Made before the type is set: a 404 must still go out as JSON.
    const svg = await bookingQrSvg(deps, operatorOf(req).tenantId, bookingIdParam(req));
    res.type('image/svg+xml').send(svg);
  });
  router.post('/api/bookings/:id/cancel', manager, async (req, res) => {
    res.json((await cancelBooking(deps, operatorOf(req), bookingIdParam(req))) satisfies CancelBookingResponse);
  });
  router.post('/api/bookings/:id/check-in', staff, async (req, res) => {
    res.json((await checkInBooking(deps.db, operatorOf(req), bookingIdParam(req))) satisfies CheckInResponse);
  });
}
