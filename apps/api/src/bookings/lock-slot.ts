import type { Tx } from '@booking/db';
import type { HoldStore } from '../holds/hold-store';
import { lockSlot } from '../locks';

type SeatsInput = { tenantId: string; slotId: string; seats: number; exceptHoldId: string };

/**
 * Locks the slot row and reports whether `seats` more fit beside the booked seats and every live
 * hold except `exceptHoldId`: for seats that hold keeps already (a booking made from it). Every
 * change of booked seats goes through this lock, which is what keeps replicas from overselling.
 */
export async function lockSlotAndCheckSeats(tx: Tx, holds: HoldStore, input: SeatsInput): Promise<boolean> {
  const slot = await lockSlot(tx, input.tenantId, input.slotId);
  if (!slot) return false;
  const otherHolds = (await holds.liveSeats([input.slotId], input.exceptHoldId)).get(input.slotId) ?? 0;
  return slot.seatsBooked + input.seats + otherHolds <= slot.capacity;
}

/**
 * The same check for seats the caller is about to add to seats_booked (a payment or cash, guests
 * added): when they fit and no live hold keeps them (the booking's hold expired, or there is
 * none), Redis counts them as booked in the same step (HoldStore.reserveSeats), so a hold placed
 * before the commit cannot take them too. Seats `exceptHoldId` still keeps move when it is released.
 */
export async function lockSlotAndReserveSeats(tx: Tx, holds: HoldStore, input: SeatsInput): Promise<boolean> {
  const slot = await lockSlot(tx, input.tenantId, input.slotId);
  if (!slot) return false;
  return holds.reserveSeats(slot, input.seats, input.exceptHoldId);
}
