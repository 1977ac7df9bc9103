import type { Config } from '@booking/config';
import { signToken } from '@booking/signing';

/**
 * How long a booking's links (manage, waiver) outlive the visit they were issued for: a year of
 * room for reschedules to later slots, so the links a customer was sent keep working for the
 * booking as it is now. What a link allows is bounded by the booking's slot when it is used
 * (rescheduling until the visit starts, waivers until the day after it ends), not by its token.
 * Both name the customer they were issued to: a transfer ends them.
 */
const RESCHEDULE_ROOM_SECONDS = 366 * 24 * 60 * 60;

/** A booking as its links name it. */
export interface LinkedBooking {
  id: string;
  tenantId: string;
  customerId: string;
}

function linkTtlSeconds(slotEndsAt: Date): number {
  return Math.max(0, Math.ceil((slotEndsAt.getTime() - Date.now()) / 1000)) + RESCHEDULE_ROOM_SECONDS;
}

/** The customer's self-service token for the booking (X-Manage-Token). */
export function manageToken(config: Config, booking: LinkedBooking, slotEndsAt: Date): string {
  return signToken(config.tokenSigningSecret, 'manage', {
    subject: `${booking.id}:${booking.customerId}`,
    tenantId: booking.tenantId,
    ttlSeconds: linkTtlSeconds(slotEndsAt),
  });
}

/** Where the booking's guests read and sign its waiver. */
export function waiverUrl(config: Config, booking: LinkedBooking, slotEndsAt: Date): string {
  const token = signToken(config.tokenSigningSecret, 'waiver', {
    subject: `${booking.id}:${booking.customerId}`,
    tenantId: booking.tenantId,
    ttlSeconds: linkTtlSeconds(slotEndsAt),
  });
  return `${config.publicBaseUrl}/api/waivers/${token}`;
}
