import type { Tx } from '@booking/db';

/**
 * Gives a membership's uses the instant they count at where a pod of the release before
 * `counts_at` left it wrong, before they are counted (call it with the membership locked). While
 * such pods serve during a rollout, their uses are written with no instant (NULL), and their
 * reschedules move a booking without moving its uses' instant. A booking's own uses (no staff
 * key) count at its slot's start, as it is now; any other use when it was recorded. Once no pod
 * of that release runs, neither statement finds a row to change.
 */
export async function placeUses(tx: Tx, membershipId: string): Promise<void> {
  // Reserved uses follow their booking: a reschedule by an old pod left them at the old slot.
  await tx.$executeRaw`
    UPDATE membership_usages AS u SET counts_at = s.starts_at
    FROM bookings AS b JOIN slots AS s ON s.id = b.slot_id
    WHERE u.membership_id = ${membershipId}::uuid AND b.id = u.booking_id AND u.actor_key_id IS NULL
      AND (u.counts_at IS NULL OR (u.status = 'reserved' AND u.counts_at <> s.starts_at))`;
  await tx.$executeRaw`
    UPDATE membership_usages SET counts_at = created_at
    WHERE membership_id = ${membershipId}::uuid AND counts_at IS NULL`;
}
