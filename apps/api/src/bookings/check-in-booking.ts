import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError, assertBookingAllows } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { TokenError, verifyToken } from '@booking/signing';
import { lockBooking } from '../locks';
import { consumeBookingUses } from '../membership-uses/booking-uses';
import type { Operator } from '../operators/api-key-auth';
import type { CheckInResponse } from './booking-schemas';

/**
 * Sets checked_in_at once; repeating it changes nothing and records no second event. Only a
 * confirmed booking can be checked in.
 */
export async function checkInBooking(db: Db, operator: Operator, bookingId: string): Promise<CheckInResponse> {
  return db.$transaction(async (tx) => {
    const booking = await lockBooking(tx, bookingId, { tenantId: operator.tenantId });
    // Status first: a booking cancelled after its guests arrived is no longer admissible.
    assertBookingAllows(booking.status, 'checkIn');
    if (booking.checkedInAt) {
      return { booking_id: bookingId, checked_in_at: booking.checkedInAt.toISOString(), already_checked_in: true };
    }
    const { checkedInAt } = await tx.booking.update({ where: { id: bookingId }, data: { checkedInAt: new Date() } });
    await consumeBookingUses(tx, bookingId);
    await recordEvent(tx, {
      tenantId: operator.tenantId,
      name: 'booking.checked_in',
      entityType: 'booking',
      entityId: bookingId,
      fields: {
        booking_id: bookingId,
        checked_in_at: checkedInAt!.toISOString(),
        checked_in_by_user_id: operator.keyId,
      },
    });
    return { booking_id: bookingId, checked_in_at: checkedInAt!.toISOString(), already_checked_in: false };
  });
}

/** Check-in from a scanned QR: the token must be genuine, unexpired and of the caller's tenant. */
export async function checkInByToken(
  deps: { db: Db; config: Config },
  operator: Operator,
  token: string,
): Promise<CheckInResponse> {
  let claims;
  try {
    claims = verifyToken(deps.config.tokenSigningSecret, 'check_in', token);
  } catch (error) {
    if (error instanceof TokenError)
      throw new AppError('invalid_token', error.reason === 'expired' ? 'the token has expired' : undefined);
    throw error;
  }
  if (claims.tenantId !== operator.tenantId) throw new AppError('booking_not_found');
  return checkInBooking(deps.db, operator, claims.subject);
}
