import { randomUUID } from 'node:crypto';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
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
export async function placeHold(deps: { db: Db; holds: HoldStore }, request: HoldRequest): Promise<HoldResponse> {
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

  const holdId = randomUUID();
  const expiresAt = await deps.db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ capacity: number; seats_booked: number }[]>`
      SELECT capacity, seats_booked FROM slots WHERE id = ${request.slot_id}::uuid FOR SHARE`;
    const available = row!.capacity - row!.seats_booked;
    return deps.holds.place(
      { id: holdId, tenantId, experienceId: request.experience_id, slotId: request.slot_id, seats: request.seats },
      available,
    );
  });
  if (expiresAt === null) throw new AppError('insufficient_capacity', 'the slot cannot supply that many seats');
  return { hold_id: holdId, expires_at: new Date(expiresAt).toISOString() };
}
