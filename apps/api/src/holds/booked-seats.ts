import type { Tx } from '@booking/db';
import type { HoldStore } from './hold-store';

/**
 * The one way slots.seats_booked changes. The caller holds the slot row lock (every change of
 * booked seats takes it), so these writes reach Redis's mirror of the slot in the order they
 * happen in PostgreSQL, before the commit:
 * - seats taken: the new, higher figure is written, so a hold placed from then on counts them.
 *   Should the commit fail, the mirror shows seats that are not booked (holds are refused early)
 *   until it expires (SLOT_MIRROR_TTL_MS). `fromHold` names the hold whose seats these are,
 *   which stops counting in the same Redis step.
 * - seats freed: the mirror is dropped rather than lowered, because a lower figure that then
 *   failed to commit would let holds take seats that are not free. The next hold reads the slot
 *   from PostgreSQL FOR SHARE, which waits for this transaction and reads what it committed; a
 *   hold whose read began before it reads again (hold-store's FORGET).
 * Either way the locked re-check of every booking against PostgreSQL's own figure is what keeps a
 * slot from being oversold.
 */
export async function changeBookedSeats(
  tx: Tx,
  holds: HoldStore,
  slotId: string,
  delta: number,
  fromHold?: { id: string; seats: number },
): Promise<void> {
  const [slot] = await tx.$queryRaw<{ seats_booked: number }[]>`
    UPDATE slots SET seats_booked = seats_booked + ${delta} WHERE id = ${slotId}::uuid RETURNING seats_booked`;
  if (delta < 0) await holds.forgetSlot(slotId);
  else await holds.seatsBooked(slotId, slot!.seats_booked, fromHold);
}
