import { AppError, assertBookingAllows, type BookingStatus } from '@booking/domain';
import { TokenError, verifyToken } from '@booking/signing';

const MAX_TOKEN_LENGTH = 2048;

export interface WaiverClaims {
  bookingId: string;
  tenantId: string;
}

/** The booking a waiver link is for. The token is the guest's only credential. */
export function waiverTokenClaims(secret: string, token: string): WaiverClaims {
  if (token.length > MAX_TOKEN_LENGTH) throw new AppError('invalid_token');
  try {
    const claims = verifyToken(secret, 'waiver', token);
    return { bookingId: claims.subject, tenantId: claims.tenantId };
  } catch (error) {
    if (error instanceof TokenError) throw new AppError(error.reason === 'expired' ? 'token_expired' : 'invalid_token');
    throw error;
  }
}

/**
 * A waiver can be read and signed while its booking stands (held or confirmed) and only for
 * experiences that require one.
 */
export function assertWaiverOpen(booking: { status: BookingStatus; requiresWaiver: boolean }): void {
  if (!booking.requiresWaiver) throw new AppError('waiver_not_required');
  assertBookingAllows(booking.status, 'signWaiver');
}
