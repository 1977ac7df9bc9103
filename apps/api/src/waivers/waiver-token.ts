import { AppError, assertBookingAllows, type BookingStatus } from '@booking/domain';
import type { Tx } from '@booking/db';
import { TokenError, verifyToken } from '@booking/signing';

const MAX_TOKEN_LENGTH = 2048;

/** Guests can read and sign a waiver until a day after the booking's visit ends. */
const SIGNING_AFTER_VISIT_MS = 24 * 60 * 60 * 1000;

export interface WaiverClaims {
  bookingId: string;
  tenantId: string;
  /** The customer the link was issued to; null for links issued before links named one. */
  customerId: string | null;
}

/** The booking a waiver link is for. The token is the guest's only credential. */
export function waiverTokenClaims(secret: string, token: string): WaiverClaims {
  if (token.length > MAX_TOKEN_LENGTH) throw new AppError('invalid_token');
  try {
    const claims = verifyToken(secret, 'waiver', token);
    const [bookingId, customerId] = claims.subject.split(':');
    return { bookingId: bookingId!, tenantId: claims.tenantId, customerId: customerId ?? null };
  } catch (error) {
    if (error instanceof TokenError) throw new AppError(error.reason === 'expired' ? 'token_expired' : 'invalid_token');
    throw error;
  }
}

/**
 * Whether a link that names no customer must be checked for a transfer (`transferred` of
 * assertWaiverOpen): read for such links only, the others name their customer.
 */
export async function transferredSinceLegacyLink(
  db: Pick<Tx, 'bookingAmendment'>,
  claims: WaiverClaims,
): Promise<boolean> {
  if (claims.customerId !== null) return false;
  return (await db.bookingAmendment.count({ where: { bookingId: claims.bookingId, kind: 'transfer' } })) > 0;
}

/**
 * A waiver can be read and signed through a link while its booking stands (held or confirmed),
 * is still the customer's the link was issued to, and its visit, wherever it has been moved,
 * ended less than a day ago; and only for experiences that require one.
 */
export function assertWaiverOpen(
  claims: WaiverClaims,
  booking: { status: BookingStatus; requiresWaiver: boolean; customerId: string; slotEndsAt: Date },
  transferred: boolean,
): void {
  // A link that names no customer (issued before links did) cannot tell whose it is: once the
  // booking has been transferred at all, it is closed rather than shown to the wrong party.
  if (claims.customerId === null ? transferred : claims.customerId !== booking.customerId) {
    throw new AppError('invalid_token', 'the booking has been transferred to another customer');
  }
  if (booking.slotEndsAt.getTime() + SIGNING_AFTER_VISIT_MS <= Date.now()) throw new AppError('token_expired');
  if (!booking.requiresWaiver) throw new AppError('waiver_not_required');
  assertBookingAllows(booking.status, 'signWaiver');
}
