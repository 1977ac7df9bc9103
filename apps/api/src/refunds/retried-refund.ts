import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import type { HoldStore } from '../holds/hold-store';
import type { Operator } from '../operators/api-key-auth';
import type Stripe from 'stripe';
import { refundView } from './create-refund';
import { reconcileRefund } from './reconcile-refund';
import type { RefundResponse } from './refund-schemas';

/**
 * The refund an earlier run of this very request made (found by its Idempotency-Key reference),
 * answered again: a retry after a lost answer, or after a 5xx that came once the refund was
 * reserved (the deadline passed while Stripe answered), gets that refund, never a second payout.
 * Still pending, it is reconciled first: Stripe is asked for the payment's refunds, and the
 * request is sent again (under the same key) only when Stripe shows none of it and never named
 * one, the one way that stays safe after Stripe has forgotten the key (a day). Null when there is none: the request is
 * new, or its refund failed (a failed refund gives its reference up; see settleRefund).
 */
export async function retriedRefund(
  deps: { db: Db; holds: HoldStore; stripe: Stripe | null },
  operator: Operator,
  idempotencyRef: string | undefined,
): Promise<{ httpStatus: 201 | 202; body: RefundResponse } | null> {
  if (idempotencyRef === undefined) return null;
  const earlier = await deps.db.refund.findFirst({
    where: { idempotencyRef, tenantId: operator.tenantId },
    select: { id: true, status: true },
  });
  if (!earlier) return null;
  const body =
    earlier.status === 'pending'
      ? await reconcileRefund(deps, operator, earlier.id).catch(async (error: unknown) => {
          // Settled meanwhile (its notification came first): as it ended.
          if (error instanceof AppError && error.code === 'refund_not_pending') return refundView(deps.db, earlier.id);
          throw error;
        })
      : await refundView(deps.db, earlier.id);
  return { httpStatus: body.status === 'succeeded' ? 201 : 202, body };
}
