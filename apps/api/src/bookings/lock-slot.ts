import type { Tx } from '@booking/db';
import type { HoldStore } from '../holds/hold-store';

/**
 * Locks the slot row and reports whether `seats` more fit beside the booked seats and every live
 * hold except `exceptHoldId`. Every change of booked seats goes through this lock, which is what
 * keeps replicas from overselling.
 */
export async function lockSlotAndCheckSeats(
  tx: Tx,
  holds: HoldStore,
  input: { slotId: string; seats: number; exceptHoldId: string },
): Promise<boolean> {
  const [slot] = await tx.$queryRaw<{ capacity: number; seats_booked: number }[]>`
    SELECT capacity, seats_booked FROM slots WHERE id = ${input.slotId}::uuid FOR NO KEY UPDATE`;
  const otherHolds = (await holds.liveSeats([input.slotId], input.exceptHoldId)).get(input.slotId) ?? 0;
  return slot!.seats_booked + input.seats + otherHolds <= slot!.capacity;
}
