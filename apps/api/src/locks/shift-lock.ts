import type { Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { claimLock } from './lock-order';

export interface LockedShift {
  id: string;
  venueId: string | null;
  openedAt: Date;
  openedByKeyId: string;
  startingCashCents: number;
}

/**
 * Locks an open shift of the tenant. Cash taken in a shift share-locks it (`share`), so closing
 * (`update`) waits for payments and sales in flight and none lands after the count. A closed
 * shift takes no more cash: 409 shift_closed.
 */
export async function lockOpenShift(
  tx: Tx,
  tenantId: string,
  shiftId: string,
  mode: 'update' | 'share',
): Promise<LockedShift> {
  claimLock(tx, 'shift');
  type Row = {
    id: string;
    venue_id: string | null;
    opened_at: Date;
    opened_by_key_id: string;
    starting_cash_cents: number;
    closed_at: Date | null;
  };
  const rows =
    mode === 'update'
      ? await tx.$queryRaw<Row[]>`
          SELECT id, venue_id, opened_at, opened_by_key_id, starting_cash_cents, closed_at FROM pos_shifts
          WHERE id = ${shiftId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`
      : await tx.$queryRaw<Row[]>`
          SELECT id, venue_id, opened_at, opened_by_key_id, starting_cash_cents, closed_at FROM pos_shifts
          WHERE id = ${shiftId}::uuid AND tenant_id = ${tenantId}::uuid FOR SHARE`;
  const shift = rows[0];
  if (!shift) throw new AppError('shift_not_found');
  if (shift.closed_at) throw new AppError('shift_closed', { closed_at: new Date(shift.closed_at).toISOString() });
  return {
    id: shift.id,
    venueId: shift.venue_id,
    openedAt: new Date(shift.opened_at),
    openedByKeyId: shift.opened_by_key_id,
    startingCashCents: shift.starting_cash_cents,
  };
}
