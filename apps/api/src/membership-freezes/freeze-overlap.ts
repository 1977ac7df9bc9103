import type { Tx } from '@booking/db';

/** A freeze of the membership, not cancelled, that shares a day with `startsOn`..`endsOn`. */
export function overlappingFreeze(tx: Tx, membershipId: string, startsOn: Date, endsOn: Date) {
  return tx.membershipFreeze.findFirst({
    where: { membershipId, status: { not: 'cancelled' }, startsOn: { lte: endsOn }, endsOn: { gte: startsOn } },
    select: { id: true },
  });
}

interface DatabaseError {
  message?: unknown;
  code?: unknown;
  meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; constraint?: unknown } } };
}

/**
 * Whether the database refused a freeze because it overlaps another: the exclusion constraint
 * membership_freezes_no_overlap (SQLSTATE 23P01), raw from pg or wrapped by Prisma's adapter.
 */
export function isFreezeOverlap(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { message, code, meta } = error as DatabaseError;
  const cause = meta?.driverAdapterError?.cause;
  const sqlState = String(cause?.originalCode ?? code ?? '');
  const text = `${String(message ?? '')} ${JSON.stringify(cause ?? {})}`;
  return sqlState === '23P01' || text.includes('membership_freezes_no_overlap');
}
