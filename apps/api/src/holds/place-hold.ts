import { createHash, randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { shareSlot } from '../locks';
import type { HoldRequest, HoldResponse } from './hold-schemas';
import type { HoldStore } from './hold-store';

/**
 * Places a soft hold on seats of a future slot of a published experience.
 *
 * The capacity check spans PostgreSQL (seats of confirmed bookings) and Redis (live holds,
 * including those of held bookings). Reading the slot row FOR SHARE while the Redis script runs
 * keeps the two consistent: a confirmation moves a hold's seats into seats_booked under the
 * row's FOR NO KEY UPDATE lock, which this shared lock waits for, so a hold placed here never
 * sees the seats in neither place. Concurrent holds do not block each other: shared locks
 * coexist and the Redis script is atomic.
 */
export async function placeHold(
  deps: { db: Db; holds: HoldStore },
  request: HoldRequest,
  idempotencyRef?: string,
): Promise<{ hold: HoldResponse; replayed: boolean }> {
  const slot = await deps.db.slot.findUnique({
    where: { id: request.slot_id },
    select: {
      experienceId: true,
      startsAt: true,
      experience: {
        select: {
          tenantId: true,
          published: true,
          minPartySize: true,
          maxPartySize: true,
          tenant: { select: { published: true } },
        },
      },
    },
  });
  if (!slot || !slot.experience.published || !slot.experience.tenant.published) throw new AppError('slot_not_found');
  if (slot.experienceId !== request.experience_id) {
    throw new AppError('experience_slot_mismatch', 'slot_id does not belong to experience_id');
  }
  const { minPartySize, maxPartySize, tenantId } = slot.experience;
  if (request.seats < minPartySize || request.seats > maxPartySize) {
    throw new AppError('invalid_guest_count', { min_party_size: minPartySize, max_party_size: maxPartySize });
  }
  if (slot.startsAt.getTime() <= Date.now()) throw new AppError('slot_unavailable', 'the slot has already started');

  const holdId = idempotencyRef === undefined ? randomUUID() : holdIdOf(idempotencyRef);
  const placed = await deps.db.$transaction(async (tx) => {
    const row = (await shareSlot(tx, request.slot_id))!;
    const available = row.capacity - row.seatsBooked;
    return deps.holds.place(
      { id: holdId, tenantId, experienceId: request.experience_id, slotId: request.slot_id, seats: request.seats },
      available,
    );
  });
  if (placed === null) throw new AppError('insufficient_capacity', 'the slot cannot supply that many seats');
  return { hold: { hold_id: holdId, expires_at: new Date(placed.expiresAt).toISOString() }, replayed: placed.existed };
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
