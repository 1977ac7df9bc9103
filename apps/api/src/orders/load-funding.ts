import type { Tx } from '@booking/db';
import { AppError } from '@booking/domain';

/**
 * How much of a refund of a till order must be taken back from the wallet its wallet_load line
 * funded. A refund gives back the order's other lines first; once the refunds of the order reach
 * beyond them, the rest was the wallet's value, and it must leave the wallet too (else the
 * customer would keep both the money and the value). An operator may also name the line
 * (`line_id`) to refund the load first. A till order loads at most one wallet.
 */
export async function loadFundingOf(
  tx: Tx,
  order: { id: string; totalCents: number; refundedCents: number },
  amountCents: number,
  namedLineId?: string,
): Promise<{ line: { id: string; walletId: string }; fundingCents: number } | null> {
  const line = await tx.orderLine.findFirst({ where: { orderId: order.id, type: 'wallet_load' } });
  if (namedLineId !== undefined && line?.id !== namedLineId) {
    throw new AppError('invalid_body', [{ field: '/line_id', message: 'names no wallet_load line of this order' }]);
  }
  if (!line) return null;
  const returnable = line.totalCents - line.returnedCents;
  const otherLines = order.totalCents - line.totalCents;
  const reachesLoad = order.refundedCents + amountCents - otherLines - line.returnedCents;
  const fundingCents = Math.max(
    0,
    Math.min(returnable, namedLineId !== undefined ? amountCents : Math.min(amountCents, reachesLoad)),
  );
  return fundingCents > 0 ? { line: { id: line.id, walletId: line.walletId! }, fundingCents } : null;
}
