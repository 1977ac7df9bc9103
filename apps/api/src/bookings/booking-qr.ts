import type { Config } from '@booking/config';
import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import QRCode from 'qrcode';
import { checkInToken } from './check-in-token';

/** The booking's check-in token as an SVG QR code; another tenant's booking does not exist. */
export async function bookingQrSvg(deps: { db: Db; config: Config }, tenantId: string, bookingId: string) {
  const booking = await deps.db.booking.findFirst({
    where: { id: bookingId, tenantId },
    select: { id: true, tenantId: true, slot: { select: { endsAt: true } } },
  });
  if (!booking) throw new AppError('booking_not_found');
  const token = checkInToken(deps.config, booking, booking.slot.endsAt);
  return QRCode.toString(token, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}
