import { randomUUID } from 'node:crypto';
import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { lockOpenShift } from '../locks';
import { retailMemberDiscount } from '../membership-uses/retail-discount';
import type { Operator } from '../operators/api-key-auth';
import type { OrderView } from '../orders/order-schemas';
import { createPosMemberships, sellablePlans } from '../membership-sales/pos-membership-lines';
import { loadOrderView } from '../orders/order-view';
import type { OpenPosOrderRequest } from './pos-order-schemas';

const MAX_TOTAL_CENTS = 100_000_000;

/**
 * Opens a retail order at the till, on an open shift: product lines, wallet loads (value
 * bought for a customer's wallet, funded when the order settles) and fixed-term memberships
 * (pending until the order settles, at the plan's price). Admissions are bookings, not
 * order lines. Nothing is recorded as an event until the order settles.
 *
 * A membership_token names a member whose plan discounts retail: its percent of the product
 * lines comes off (discount_cents, membership_id; total_cents is after it), recorded as a use of
 * the membership when the order settles.
 */
export async function openPosOrder(
  deps: { db: Db; config: Config },
  operator: Operator,
  request: OpenPosOrderRequest,
): Promise<OrderView> {
  const membershipLines = request.lines.flatMap((line, position) =>
    line.type === 'membership' ? [{ position, line }] : [],
  );
  const plans = await sellablePlans(
    deps.db,
    operator.tenantId,
    request.currency,
    membershipLines.map(({ line }) => line),
  );
  const lines = request.lines.map((line, position) =>
    line.type === 'membership'
      ? {
          position,
          type: line.type,
          sku: null,
          description: plans.get(line.plan_id)!.name,
          quantity: 1,
          unitPriceCents: plans.get(line.plan_id)!.priceCents,
          totalCents: plans.get(line.plan_id)!.priceCents,
          walletId: null,
          planId: line.plan_id,
        }
      : line.type === 'product'
        ? {
            position,
            type: line.type,
            sku: line.sku ?? null,
            description: line.description,
            quantity: line.quantity,
            unitPriceCents: line.unit_price_cents,
            totalCents: line.quantity * line.unit_price_cents,
            walletId: null,
          }
        : {
            position,
            type: line.type,
            sku: null,
            description: 'wallet load',
            quantity: 1,
            unitPriceCents: line.amount_cents,
            totalCents: line.amount_cents,
            walletId: line.wallet_id,
          },
  );
  // One wallet per order: a refund of the order then knows whose value to take back.
  if (lines.filter((line) => line.type === 'wallet_load').length > 1) {
    throw new AppError('invalid_body', [{ field: '/lines', message: 'an order loads at most one wallet' }]);
  }
  const totalCents = lines.reduce((sum, line) => sum + line.totalCents, 0);
  if (totalCents > MAX_TOTAL_CENTS) {
    throw new AppError('invalid_body', [
      { field: '/lines', message: `the order total must be at most ${MAX_TOTAL_CENTS}` },
    ]);
  }

  return deps.db.$transaction(async (tx) => {
    const shift = await lockOpenShift(tx, operator.tenantId, request.shift_id, 'share');
    const productTotalCents = lines.reduce((sum, line) => sum + (line.type === 'product' ? line.totalCents : 0), 0);
    const member = request.membership_token
      ? await retailMemberDiscount(tx, deps.config, operator.tenantId, request.membership_token, productTotalCents)
      : null;
    if (request.customer_id !== undefined) {
      const customer = await tx.customer.findFirst({ where: { id: request.customer_id, tenantId: operator.tenantId } });
      if (!customer) throw new AppError('customer_not_found');
    }
    const walletIds = [...new Set(lines.flatMap((line) => (line.walletId ? [line.walletId] : [])))];
    const wallets = await tx.wallet.findMany({ where: { id: { in: walletIds }, tenantId: operator.tenantId } });
    for (const walletId of walletIds) {
      const wallet = wallets.find((w) => w.id === walletId);
      if (!wallet) throw new AppError('wallet_not_found', { wallet_id: walletId });
      if (wallet.currency !== request.currency) {
        throw new AppError('wallet_currency_mismatch', {
          wallet_currency: wallet.currency,
          order_currency: request.currency,
        });
      }
    }
    const orderId = randomUUID();
    await tx.order.create({
      data: {
        id: orderId,
        tenantId: operator.tenantId,
        channel: 'pos',
        kind: 'retail',
        status: 'open',
        customerId: request.customer_id ?? null,
        shiftId: shift.id,
        venueId: shift.venueId,
        currency: request.currency,
        totalCents: totalCents - (member?.discountCents ?? 0),
        // Named only when it gave a discount: that is all a retail order's membership_id means.
        membershipId: member && member.discountCents > 0 ? member.membershipId : null,
        discountCents: member?.discountCents ?? 0,
        actorKeyId: operator.keyId,
        lines: { create: lines },
      },
    });
    await createPosMemberships(tx, { tenantId: operator.tenantId, orderId, lines: membershipLines, plans });
    return (await loadOrderView(tx, orderId, operator.tenantId))!;
  });
}
