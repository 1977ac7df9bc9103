import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { countHold } from '../http/counters';
import type { HoldRequest, HoldResponse } from './hold-schemas';
import { holdIdOn, type HoldStore, type SlotSnapshot } from './hold-store';

/**
 * Places a soft hold on seats of a future slot of a published experience.
 *
 * The whole decision is one Redis script (HoldStore.place): the slot's mirror (capacity, seats
 * booked, experience, party sizes, start), the running total of its live holds, and the new hold,
 * atomically, so replicas racing for the last seats cannot both get them. PostgreSQL is read only
 * when Redis has no mirror of the slot. Changes of booked seats write the mirror under the slot
 * row lock before they commit (booked-seats.ts), and every booking re-checks its seats against
 * PostgreSQL under that lock, so a mirror that is briefly off can cost a booking a 409, never
 * oversell the slot.
 */
export async function placeHold(
  deps: { db: Db; holds: HoldStore },
  request: HoldRequest,
  idempotencyRef?: string,
): Promise<{ hold: HoldResponse; replayed: boolean }> {
  // The request's ids are in lower case (the parser's doing, see canonical-uuids): they name
  // Redis keys and are compared with the mirror's experience as text.
  const { slot_id: slotId, experience_id: experienceId } = request;
  // The id carries the slot's tag, the key of its record on a cluster (see slotTag).
  const holdId = holdIdOn(slotId, idempotencyRef === undefined ? randomUUID() : holdIdOf(idempotencyRef));
  const placed = await deps.holds.place({ id: holdId, experienceId, slotId, seats: request.seats }, () =>
    readOpenSlot(deps.db, slotId),
  );
  countHold(placed.outcome);
  switch (placed.outcome) {
    case 'placed':
    case 'existed':
      return {
        hold: { hold_id: holdId, expires_at: new Date(placed.expiresAt).toISOString() },
        replayed: placed.outcome === 'existed',
      };
    case 'slot_not_found':
      throw new AppError('slot_not_found');
    case 'experience_mismatch':
      throw new AppError('experience_slot_mismatch', 'slot_id does not belong to experience_id');
    case 'party_size':
      throw new AppError('invalid_guest_count', {
        min_party_size: placed.minPartySize,
        max_party_size: placed.maxPartySize,
      });
    case 'started':
      throw new AppError('slot_unavailable', 'the slot has already started');
    case 'full':
      throw new AppError('insufficient_capacity', 'the slot cannot supply that many seats');
  }
}

/**
 * The slot as a hold needs it, if its experience and tenant are published; one statement. FOR
 * SHARE waits for a transaction changing the slot's booked seats, so the figure read is the one
 * it committed (a change that frees seats drops the mirror before it commits; see booked-seats).
 */
async function readOpenSlot(db: Db, slotId: string): Promise<SlotSnapshot | null> {
  const [slot] = await db.$queryRaw<
    {
      capacity: number;
      seats_booked: number;
      experience_id: string;
      tenant_id: string;
      starts_at: Date;
      min_party_size: number;
      max_party_size: number;
    }[]
  >`
    SELECT s.capacity, s.seats_booked, s.experience_id, s.tenant_id, s.starts_at, e.min_party_size, e.max_party_size
    FROM slots s JOIN experiences e ON e.id = s.experience_id JOIN tenants t ON t.id = s.tenant_id
    WHERE s.id = ${slotId}::uuid AND e.published AND t.published
    FOR SHARE OF s`;
  return slot
    ? {
        capacity: slot.capacity,
        seatsBooked: slot.seats_booked,
        experienceId: slot.experience_id,
        tenantId: slot.tenant_id,
        startsAt: new Date(slot.starts_at),
        minPartySize: slot.min_party_size,
        maxPartySize: slot.max_party_size,
      }
    : null;
}

/**
 * The hold id of a request with an Idempotency-Key: the same for every retry of it, so a retry
 * whose first run placed the hold and died before answering finds that hold instead of placing
 * a second one.
 */
function holdIdOf(idempotencyRef: string): string {
  const hex = createHash('sha256').update(`hold\n${idempotencyRef}`).digest('hex');
  // Shaped as a version-4, RFC 4122 variant uuid, like the random ones.
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
