import type { Db } from '@booking/db';
import { recordEvent } from '@booking/events';
import { lockMembershipUnlessBusy } from '../locks';
import { membershipRef } from '../memberships/membership-ref';

const BATCH = 100;

/**
 * Expires active fixed-term memberships whose term is over (expires_at ≤ now): status expired,
 * membership.expired. A frozen membership does not expire: its expiry moves out when it is
 * unfrozen, and it expires after that. Recurring memberships end by their subscription instead.
 *
 * Safe on any number of workers at once: each membership is claimed SKIP LOCKED and its status
 * and expiry re-read under the lock, so each expires once. Returns how many expired.
 */
export async function expireMemberships(deps: { db: Db }, now = new Date()): Promise<number> {
  const due = await deps.db.$queryRaw<{ id: string }[]>`
    SELECT id FROM memberships
    WHERE billing = 'fixed_term' AND status = 'active' AND expires_at <= ${now}
    ORDER BY expires_at, id
    LIMIT ${BATCH}`;
  let expired = 0;
  for (const { id } of due) {
    const done = await deps.db.$transaction(async (tx) => {
      const membership = await lockMembershipUnlessBusy(tx, id);
      if (!membership || membership.status !== 'active' || !membership.expiresAt || membership.expiresAt > now) {
        return false;
      }
      await tx.membership.update({ where: { id }, data: { status: 'expired' } });
      await recordEvent(tx, {
        tenantId: membership.tenantId,
        name: 'membership.expired',
        entityType: 'membership',
        entityId: id,
        fields: { ...membershipRef(membership), expires_at: membership.expiresAt.toISOString() },
      });
      return true;
    });
    if (done) expired += 1;
  }
  return expired;
}
