import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { bookingIdParam } from '../http/path-params';
import { guestCountCode } from '../bookings/guest-count-code';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { amendmentActorOf, requireManagerOrManageToken } from './amendment-auth';
import { PartyAmendmentRequest, RescheduleRequest, TransferRequest } from './amendment-schemas';
import { rescheduleBooking } from './reschedule-booking';
import { transferBooking } from './transfer-booking';
import { updateParty } from './update-party';

const parseReschedule = createParser(RescheduleRequest);
const parseTransfer = createParser(TransferRequest);
const parseParty = createParser(PartyAmendmentRequest, guestCountCode);

/** Changes to confirmed bookings: another slot, another customer, another party size. */
export function amendmentRoutes(router: IRouter, deps: AppDeps): void {
  const manager = requireRole(deps.db, 'manager');

  router.post('/api/bookings/:id/reschedule', requireManagerOrManageToken(deps), async (req, res) => {
    const bookingId = bookingIdParam(req);
    res.json(await rescheduleBooking(deps, amendmentActorOf(req), bookingId, parseReschedule(req.body)));
  });
  router.post('/api/bookings/:id/transfer', manager, async (req, res) => {
    const bookingId = bookingIdParam(req);
    res.json(await transferBooking(deps, operatorOf(req), bookingId, parseTransfer(req.body)));
  });
  router.post('/api/bookings/:id/party', manager, async (req, res) => {
    const bookingId = bookingIdParam(req);
    res.json(await updateParty(deps, operatorOf(req), bookingId, parseParty(req.body)));
  });
}
