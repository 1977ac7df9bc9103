import type { Tx } from '@booking/db';
import { claimLock } from './lock-order';

/**
 * Serialises shift openings of one register (tenant + venue, or the tenant's venue-less one)
 * for the rest of the transaction, so two tills opening at once cannot both find no open shift.
 */
export async function lockRegister(tx: Tx, tenantId: string, venueId: string | null): Promise<void> {
  claimLock(tx, 'register');
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`pos_shift:${tenantId}:${venueId ?? ''}`}))`;
}

/**
 * Serialises sales paid by one provider payment reference, across tenants: the second waits for
 * the first to commit and then finds its sale, rather than failing on the unique index.
 */
export async function lockSaleReference(tx: Tx, reference: string): Promise<void> {
  claimLock(tx, 'sale_reference');
  await tx.$executeRaw`
    SELECT pg_advisory_xact_lock(hashtextextended(${`gift-card-sale-reference:${reference}`}, 0))`;
}
