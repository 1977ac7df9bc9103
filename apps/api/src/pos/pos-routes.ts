import { AppError } from '@booking/domain';
import { Router, type Request } from 'express';
import type { AppDeps } from '../app-deps';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { closeShift } from './close-shift';
import { openShift } from './open-shift';
import { CashPaymentRequest, CloseShiftRequest, OpenShiftRequest } from './pos-schemas';
import { recordCashPayment } from './record-cash-payment';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const parseOpenShift = createParser(OpenShiftRequest);
const parseCloseShift = createParser(CloseShiftRequest);
const parseCashPayment = createParser(CashPaymentRequest);

/** The `:id` of a shift route; an id that is not a uuid names no shift. */
function shiftIdParam(req: Request): string {
  const id = String(req.params.id);
  if (!UUID.test(id)) throw new AppError('shift_not_found');
  return id;
}

/** The point of sale: staff open a register and take cash, managers close it with the count. */
export function posRoutes(deps: AppDeps): Router {
  const router = Router();
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');

  router.post('/api/pos/shifts/open', staff, async (req, res) => {
    res.status(201).json(await openShift(deps.db, operatorOf(req), parseOpenShift(req.body)));
  });
  router.post('/api/pos/shifts/close', manager, async (req, res) => {
    res.json(await closeShift(deps.db, operatorOf(req), parseCloseShift(req.body)));
  });
  router.post('/api/pos/shifts/:id/cash-payments', staff, async (req, res) => {
    const shiftId = shiftIdParam(req);
    res.json(await recordCashPayment(deps, operatorOf(req), shiftId, parseCashPayment(req.body)));
  });
  return router;
}
