import type { IRouter, Request, Response } from 'express';
import type { AppDeps } from '../app-deps';
import { idempotencyFor, idempotencyRef, markReplayed } from '../http/idempotency';
import { idParam } from '../http/path-params';
import { createParser } from '../http/validation';
import { operatorOf, requireRole } from '../operators/api-key-auth';
import { createRefund, type RefundInput } from './create-refund';
import { retriedRefund } from './retried-refund';
import { reconcileRefund } from './reconcile-refund';
import { PartialRefundRequest, RefundRequest } from './refund-schemas';

const parseRefund = createParser(RefundRequest);
const parsePartialRefund = createParser(PartialRefundRequest);

/** Refunds of a booking's card payment through the payment provider (manager+). */
export function refundRoutes(router: IRouter, deps: AppDeps): void {
  const manager = requireRole(deps.db, 'manager');
  // After requireRole: retries are deduplicated per API key.
  const idempotent = idempotencyFor(deps.redis, deps.config);
  const once = (scope: string) => idempotent(scope, (req) => operatorOf(req).keyId);

  // A retry of a request whose refund was made gets that refund again (see retried-refund).
  const refundOnce = async (req: Request, res: Response, input: RefundInput) => {
    const ref = idempotencyRef(res);
    const retried = await retriedRefund(deps, operatorOf(req), ref);
    if (retried) markReplayed(res);
    const result = retried ?? (await createRefund(deps, operatorOf(req), input, ref));
    res.status(result.httpStatus).json(result.body);
  };

  router.post('/api/payments/refunds', manager, once('refunds'), async (req, res) => {
    const body = parseRefund(req.body);
    await refundOnce(req, res, {
      bookingId: body.booking_id,
      amountCents: body.amount_cents,
      reason: body.reason,
      keepBookingActive: false,
    });
  });
  router.post('/api/refunds/partial', manager, once('refunds-partial'), async (req, res) => {
    const body = parsePartialRefund(req.body);
    await refundOnce(req, res, {
      bookingId: body.booking_id,
      amountCents: body.amount_cents,
      reason: body.reason,
      keepBookingActive: body.keep_booking_active,
    });
  });
  // Asks the provider about a refund stuck in pending and settles it (or sends it again).
  // Naturally idempotent: once settled, another call is 409 refund_not_pending.
  router.post('/api/refunds/:id/reconcile', manager, async (req, res) => {
    res.status(200).json(await reconcileRefund(deps, operatorOf(req), idParam(req, 'refund_not_found')));
  });
}
