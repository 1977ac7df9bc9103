import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import type { Operator } from '../operators/api-key-auth';
import type { ClosedShift, CloseShiftRequest } from './pos-schemas';

interface LockedShift {
  id: string;
  venue_id: string | null;
  opened_at: Date;
  opened_by_key_id: string;
  starting_cash_cents: number;
  closed_at: Date | null;
}

/**
 * Locks a shift of the tenant. Cash taken in a shift share-locks it, so closing (FOR UPDATE)
 * waits for payments in flight and none lands after the count.
 */
export async function lockShift(
  tx: Tx,
  tenantId: string,
  shiftId: string,
  mode: 'update' | 'share',
): Promise<LockedShift> {
  const rows =
    mode === 'update'
      ? await tx.$queryRaw<LockedShift[]>`
          SELECT id, venue_id, opened_at, opened_by_key_id, starting_cash_cents, closed_at FROM pos_shifts
          WHERE id = ${shiftId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`
      : await tx.$queryRaw<LockedShift[]>`
          SELECT id, venue_id, opened_at, opened_by_key_id, starting_cash_cents, closed_at FROM pos_shifts
          WHERE id = ${shiftId}::uuid AND tenant_id = ${tenantId}::uuid FOR SHARE`;
  const shift = rows[0];
  if (!shift) throw new AppError('shift_not_found');
  if (shift.closed_at) throw new AppError('shift_closed', { closed_at: shift.closed_at.toISOString() });
  return shift;
}

/** Cash booking payments and cash gift card sales taken in the shift. */
async function collectedCash(tx: Tx, shiftId: string): Promise<number> {
  const [row] = await tx.$queryRaw<{ cents: bigint }[]>`
    SELECT (SELECT COALESCE(SUM(amount_cents), 0) FROM payments
             WHERE shift_id = ${shiftId}::uuid AND method = 'cash' AND status = 'succeeded')
         + (SELECT COALESCE(SUM(amount_cents), 0) FROM gift_card_sales
             WHERE shift_id = ${shiftId}::uuid AND method = 'cash') AS cents`;
  return Number(row!.cents);
}

/**
 * Closes a POS shift with the counted cash (manager+): expected = starting + collected,
 * variance = counted - expected (positive = over, negative = short).
 */
export async function closeShift(db: Db, operator: Operator, request: CloseShiftRequest): Promise<ClosedShift> {
  return db.$transaction(async (tx) => {
    const shift = await lockShift(tx, operator.tenantId, request.shift_id, 'update');
    const collected = await collectedCash(tx, shift.id);
    const expected = shift.starting_cash_cents + collected;
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
      venue_id: shift.venue_id,
      opened_at: shift.opened_at.toISOString(),
      closed_at: closed.closedAt!.toISOString(),
      opened_by_user_id: shift.opened_by_key_id,
      closed_by_user_id: operator.keyId,
      starting_cash_cents: shift.starting_cash_cents,
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
