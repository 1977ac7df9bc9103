import type { IRouter } from 'express';
import type { AppDeps } from '../app-deps';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { closeShift } from './close-shift';
import { openShift } from './open-shift';
import { CashPaymentRequest, CloseShiftRequest, OpenShiftRequest } from './pos-schemas';
import { recordCashPayment } from './record-cash-payment';

const parseOpenShift = createParser(OpenShiftRequest);
const parseCloseShift = createParser(CloseShiftRequest);
const parseCashPayment = createParser(CashPaymentRequest);

/** The point of sale: staff open a register and take cash, managers close it with the count. */
export function posRoutes(router: IRouter, deps: AppDeps): void {
  const staff = requireRole(deps.db, 'staff');
  const manager = requireRole(deps.db, 'manager');

  router.post('/api/pos/shifts/open', staff, async (req, res) => {
    res.status(201).json(await openShift(deps.db, operatorOf(req), parseOpenShift(req.body)));
  });
  router.post('/api/pos/shifts/close', manager, async (req, res) => {
    res.json(await closeShift(deps.db, operatorOf(req), parseCloseShift(req.body)));
  });
  router.post('/api/pos/shifts/:id/cash-payments', staff, async (req, res) => {
    const shiftId = idParam(req, 'shift_not_found');
    res.json(await recordCashPayment(deps, operatorOf(req), shiftId, parseCashPayment(req.body)));
  });
}
