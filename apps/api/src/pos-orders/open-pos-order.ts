import { randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { lockOpenShift } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { OrderView } from '../orders/order-schemas';
import { loadOrderView } from '../orders/order-view';
import type { OpenPosOrderRequest } from './pos-order-schemas';

const MAX_TOTAL_CENTS = 100_000_000;

/**
 * Opens a retail order at the till, on an open shift: product lines and wallet loads (value
 * bought for a customer's wallet, funded when the order settles). Admissions are bookings, not
 * order lines. Nothing is recorded as an event until the order settles.
 */
export async function openPosOrder(db: Db, operator: Operator, request: OpenPosOrderRequest): Promise<OrderView> {
  const lines = request.lines.map((line, position) =>
    line.type === 'product'
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

  return db.$transaction(async (tx) => {
    const shift = await lockOpenShift(tx, operator.tenantId, request.shift_id, 'share');
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
        totalCents,
        actorKeyId: operator.keyId,
        lines: { create: lines },
      },
    });
    return (await loadOrderView(tx, orderId, operator.tenantId))!;
  });
}
