/**
 * Seats a slot can still sell: its capacity less the seats of confirmed bookings and of live
 * holds (a held booking keeps its seats through its hold).
 */
export function seatsRemaining(slot: { capacity: number; seatsBooked: number }, liveHoldSeats: number): number {
  return Math.max(0, slot.capacity - slot.seatsBooked - liveHoldSeats);
}
