import type { Tx } from '@booking/db';
import type { HoldStore } from '../holds/hold-store';
import { lockSlot } from '../locks';

/**
 * Locks the slot row and reports whether `seats` more fit beside the booked seats and every live
 * hold except `exceptHoldId`. Every change of booked seats goes through this lock, which is what
 * keeps replicas from overselling.
 */
export async function lockSlotAndCheckSeats(
  tx: Tx,
  holds: HoldStore,
  input: { tenantId: string; slotId: string; seats: number; exceptHoldId: string },
): Promise<boolean> {
  const slot = await lockSlot(tx, input.tenantId, input.slotId);
  if (!slot) return false;
  const otherHolds = (await holds.liveSeats([input.slotId], input.exceptHoldId)).get(input.slotId) ?? 0;
  return slot.seatsBooked + input.seats + otherHolds <= slot.capacity;
}
