import type { Tx } from '@booking/db';
import { claimLock } from './lock-order';

export interface LockedSlot {
  id: string;
  experienceId: string;
  startsAt: Date;
  endsAt: Date;
  capacity: number;
  seatsBooked: number;
}

/**
 * Locks the tenant's slots among `slotIds` (FOR NO KEY UPDATE, the lock every change of booked
 * seats takes) in id order, in one statement, so two moves between the same slots in opposite
 * directions queue instead of deadlocking. Slots of other tenants are absent from the result.
 */
export async function lockSlots(tx: Tx, tenantId: string, slotIds: string[]): Promise<Map<string, LockedSlot>> {
  claimLock(tx, 'slot');
  const rows = await tx.$queryRaw<
    { id: string; experience_id: string; starts_at: Date; ends_at: Date; capacity: number; seats_booked: number }[]
  >`
    SELECT id, experience_id, starts_at, ends_at, capacity, seats_booked FROM slots
    WHERE id = ANY(${slotIds}::uuid[]) AND tenant_id = ${tenantId}::uuid
    ORDER BY id FOR NO KEY UPDATE`;
  return new Map(
    rows.map((row) => [
      row.id,
      {
        id: row.id,
        experienceId: row.experience_id,
        startsAt: new Date(row.starts_at),
        endsAt: new Date(row.ends_at),
        capacity: row.capacity,
        seatsBooked: row.seats_booked,
      },
    ]),
  );
}

/** Locks one slot of the tenant for a change of its booked seats. */
export async function lockSlot(tx: Tx, tenantId: string, slotId: string): Promise<LockedSlot | undefined> {
  return (await lockSlots(tx, tenantId, [slotId])).get(slotId);
}
