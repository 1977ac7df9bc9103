import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { TokenError, verifyToken } from '@booking/signing';
import type { BuyerOrder } from './online-order-schemas';

/** The tenant of the order `token` was issued for, or 401 (forged, another order's, expired). */
export function authenticateOrderToken(config: Config, token: string | undefined, orderId: string): string {
  if (!token) throw new AppError('invalid_token', 'X-Order-Token is required');
  try {
    const claims = verifyToken(config.tokenSigningSecret, 'order', token);
    if (claims.subject !== orderId) throw new AppError('invalid_token', 'the token is for another order');
    return claims.tenantId;
  } catch (error) {
    if (error instanceof TokenError) throw new AppError(error.reason === 'expired' ? 'token_expired' : 'invalid_token');
    throw error;
  }
}

/** What the buyer's page polls after paying: whether the top-up or membership purchase went through. */
export async function getBuyerOrder(db: Db, tenantId: string, orderId: string): Promise<BuyerOrder> {
  const order = await db.order.findFirst({
    where: { id: orderId, tenantId, channel: 'online' },
    include: { lines: { where: { type: 'membership' }, select: { planId: true } } },
  });
  const shaped =
    order?.kind === 'wallet_topup'
      ? order.walletId !== null
      : order?.kind === 'membership' && order.membershipId !== null;
  if (!order || !shaped || !order.payBy || (order.kind !== 'wallet_topup' && order.kind !== 'membership')) {
    throw new AppError('order_not_found');
  }
  return {
    order_id: order.id,
    kind: order.kind,
    status: order.status as BuyerOrder['status'],
    amount_cents: order.totalCents,
    currency: order.currency,
    wallet_id: order.walletId,
    membership_id: order.kind === 'membership' ? order.membershipId : null,
    plan_id: order.lines[0]?.planId ?? null,
    pay_by: order.payBy.toISOString(),
    paid_at: order.paidAt?.toISOString() ?? null,
    cancelled_at: order.cancelledAt?.toISOString() ?? null,
  };
}
