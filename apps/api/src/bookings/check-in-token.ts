import type { Config } from '@booking/config';
import { signToken } from '@booking/signing';

/** The token a booking's QR code carries; valid until a day after the visit. */
export function checkInToken(config: Config, booking: { id: string; tenantId: string }, slotEndsAt: Date): string {
  return signToken(config.tokenSigningSecret, 'check_in', {
    subject: booking.id,
    tenantId: booking.tenantId,
    ttlSeconds: Math.max(60, Math.ceil((slotEndsAt.getTime() - Date.now()) / 1000) + 24 * 60 * 60),
  });
}
