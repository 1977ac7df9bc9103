import { Router } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotent } from '../http/idempotency';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { createRefund } from './create-refund';
import { PartialRefundRequest, RefundRequest } from './refund-schemas';

const parseRefund = createParser(RefundRequest);
const parsePartialRefund = createParser(PartialRefundRequest);

/** Refunds of a booking's card payment through the payment provider (manager+). */
export function refundRoutes(deps: AppDeps): Router {
  const router = Router();
  const manager = requireRole(deps.db, 'manager');
  // After requireRole: retries are deduplicated per API key.
  const once = (scope: string) =>
    idempotent(deps.redis, {
      scope,
      ttlSeconds: deps.config.idempotencyTtlSeconds,
      clientOf: (req) => operatorOf(req).keyId,
    });

  router.post('/api/payments/refunds', manager, once('refunds'), async (req, res) => {
    const body = parseRefund(req.body);
    const result = await createRefund(deps, operatorOf(req), {
      bookingId: body.booking_id,
      amountCents: body.amount_cents,
      reason: body.reason,
      keepBookingActive: false,
    });
    res.status(result.httpStatus).json(result.body);
  });
  router.post('/api/refunds/partial', manager, once('refunds-partial'), async (req, res) => {
    const body = parsePartialRefund(req.body);
    const result = await createRefund(deps, operatorOf(req), {
      bookingId: body.booking_id,
      amountCents: body.amount_cents,
      reason: body.reason,
      keepBookingActive: body.keep_booking_active,
    });
    res.status(result.httpStatus).json(result.body);
  });
  return router;
}
