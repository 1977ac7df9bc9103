/**
 * Seats a slot can still sell: its capacity less the seats of bookings that hold capacity
 * (held and confirmed) and the seats of live holds.
 */
export function seatsRemaining(slot: { capacity: number; seatsBooked: number }, liveHoldSeats: number): number {
  return Math.max(0, slot.capacity - slot.seatsBooked - liveHoldSeats);
}
