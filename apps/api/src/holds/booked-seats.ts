import type { Tx } from '@booking/db';
import type { HoldStore } from './hold-store';

/**
 * The one way slots.seats_booked changes. The caller holds the slot row lock (every change of
 * booked seats takes it), so these writes reach Redis's mirror of the slot in the order they
 * happen in PostgreSQL, before the commit: a hold placed at any moment counts the seats either
 * in a live hold or as booked. If the commit then fails, the mirror shows the uncommitted figure
 * until it expires (SLOT_MIRROR_TTL_MS); the locked re-check of every booking against
 * PostgreSQL's own figure is what keeps a slot from being oversold even then. `fromHold` names
 * the hold whose seats these are, which stops counting in the same Redis step.
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
  await holds.seatsBooked(slotId, slot!.seats_booked, fromHold);
}
