import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { lockRegister } from '../locks';
import type { Operator } from '../operators/api-key-auth';
import type { OpenShift, OpenShiftRequest } from './pos-schemas';

/** Opens a POS shift with its starting cash count (staff+); one open shift per register. */
export async function openShift(db: Db, operator: Operator, request: OpenShiftRequest): Promise<OpenShift> {
  const venueId = request.venue_id ?? null;
  return db.$transaction(async (tx) => {
    if (venueId && !(await tx.venue.findFirst({ where: { id: venueId, tenantId: operator.tenantId } }))) {
      throw new AppError('venue_not_found');
    }
    await lockRegister(tx, operator.tenantId, venueId);
    const open = await tx.posShift.findFirst({
      where: { tenantId: operator.tenantId, venueId, closedAt: null },
      select: { id: true },
    });
    if (open) throw new AppError('shift_already_open', { shift_id: open.id });

    const shift = await tx.posShift.create({
      data: {
        tenantId: operator.tenantId,
        venueId,
        openedByKeyId: operator.keyId,
        startingCashCents: request.starting_cash_cents,
      },
    });
    const view: OpenShift = {
      shift_id: shift.id,
      status: 'open',
      venue_id: shift.venueId,
      opened_at: shift.openedAt.toISOString(),
      opened_by_user_id: shift.openedByKeyId,
      starting_cash_cents: shift.startingCashCents,
    };
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'shift.opened',
      entityType: 'shift',
      entityId: shift.id,
      fields: {
        shift_id: view.shift_id,
        opened_at: view.opened_at,
        opened_by_user_id: view.opened_by_user_id,
        starting_cash_cents: view.starting_cash_cents,
        venue_id: view.venue_id,
      },
    });
    return view;
  });
}
