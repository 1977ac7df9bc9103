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
  // Refunds still pending on the line already hold what they take back (and count their amount
  // in the order's refunded_cents): that value is spoken for as if returned, so no refund or
  // dispute meanwhile takes it a second time.
  const reserved = await tx.orderRefund.aggregate({
    where: { lineId: line.id, status: 'pending' },
    _sum: { debitedCents: true, shortfallCents: true },
  });
  const returned = line.returnedCents + (reserved._sum.debitedCents ?? 0) + (reserved._sum.shortfallCents ?? 0);
  const returnable = line.totalCents - returned;
  const otherLines = order.totalCents - line.totalCents;
  const reachesLoad = order.refundedCents + amountCents - otherLines - returned;
  const fundingCents = Math.max(
    0,
    Math.min(returnable, namedLineId !== undefined ? amountCents : Math.min(amountCents, reachesLoad)),
  );
  return fundingCents > 0 ? { line: { id: line.id, walletId: line.walletId! }, fundingCents } : null;
}
