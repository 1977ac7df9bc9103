import type { Db, Tx } from '@booking/db';
import { recordEvent } from '@booking/events';
import { lockOpenShift } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { ClosedShift, CloseShiftRequest } from './pos-schemas';

/**
 * Cash taken in the shift: cash booking payments, cash gift card sales and the cash tenders of
 * settled till orders, less cash paid out of it by order refunds.
 */
async function collectedCash(tx: Tx, shiftId: string): Promise<number> {
  const [row] = await tx.$queryRaw<{ cents: bigint }[]>`
    SELECT (SELECT COALESCE(SUM(amount_cents), 0) FROM payments
             WHERE shift_id = ${shiftId}::uuid AND method = 'cash' AND status = 'succeeded')
         + (SELECT COALESCE(SUM(amount_cents), 0) FROM gift_card_sales
             WHERE shift_id = ${shiftId}::uuid AND method = 'cash')
         + (SELECT COALESCE(SUM(amount_cents), 0) FROM order_tenders
             WHERE shift_id = ${shiftId}::uuid AND type = 'cash' AND status = 'captured')
         - (SELECT COALESCE(SUM(r.amount_cents), 0) FROM order_refunds r JOIN order_tenders t ON t.id = r.tender_id
             WHERE r.shift_id = ${shiftId}::uuid AND t.type = 'cash' AND r.status = 'succeeded') AS cents`;
  return Number(row!.cents);
}

/**
 * Closes a POS shift with the counted cash (manager+): expected = starting + collected,
 * variance = counted - expected (positive = over, negative = short).
 */
export async function closeShift(db: Db, operator: Operator, request: CloseShiftRequest): Promise<ClosedShift> {
  return db.$transaction(async (tx) => {
    const shift = await lockOpenShift(tx, operator.tenantId, request.shift_id, 'update');
    const collected = await collectedCash(tx, shift.id);
    const expected = shift.startingCashCents + collected;
    const ending = request.counted_cash_cents;
    const closed = await tx.posShift.update({
      where: { id: shift.id },
      data: {
        closedAt: new Date(),
        closedByKeyId: operator.keyId,
        endingCashCents: ending,
        expectedCashCents: expected,
        varianceCents: ending - expected,
      },
    });
    const view: ClosedShift = {
      shift_id: shift.id,
      status: 'closed',
      venue_id: shift.venueId,
      opened_at: shift.openedAt.toISOString(),
      closed_at: closed.closedAt!.toISOString(),
      opened_by_user_id: shift.openedByKeyId,
      closed_by_user_id: operator.keyId,
      starting_cash_cents: shift.startingCashCents,
      collected_cash_cents: collected,
      expected_cash_cents: expected,
      ending_cash_cents: ending,
      variance_cents: ending - expected,
    };
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'shift.closed',
      entityType: 'shift',
      entityId: shift.id,
      fields: {
        shift_id: view.shift_id,
        opened_at: view.opened_at,
        closed_at: view.closed_at,
        closed_by_user_id: view.closed_by_user_id,
        starting_cash_cents: view.starting_cash_cents,
        collected_cash_cents: view.collected_cash_cents,
        expected_cash_cents: view.expected_cash_cents,
        ending_cash_cents: view.ending_cash_cents,
        variance_cents: view.variance_cents,
      },
    });
    return view;
  });
}
