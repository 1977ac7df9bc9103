import type { Db } from '@booking/db';
import { AppError } from '@booking/domain';
import { CURRENT_SIGNATURES } from './current-signatures';
import type { WaiverView } from './waiver-schemas';
import { WAIVER_TEXT, WAIVER_VERSION } from './waiver-text';
import { assertWaiverOpen, transferredSinceLegacyLink, type WaiverClaims } from './waiver-token';

/**
 * What the guest sees behind the booking's waiver_url: the visit, the text to sign and who of the
 * current party has signed (never the names of a party the booking was transferred from).
 */
export async function getWaiver(deps: { db: Db }, claims: WaiverClaims): Promise<WaiverView> {
  const booking = await deps.db.booking.findFirst({
    where: { id: claims.bookingId, tenantId: claims.tenantId },
    include: {
      experience: { select: { name: true, requiresWaiver: true } },
      slot: { select: { startsAt: true, endsAt: true } },
      waiverSignatures: {
        where: CURRENT_SIGNATURES,
        orderBy: { signedAt: 'asc' },
        select: { participantName: true, signedAt: true },
      },
    },
  });
  if (!booking) throw new AppError('waiver_not_found');
  assertWaiverOpen(
    claims,
    {
      status: booking.status,
      requiresWaiver: booking.experience.requiresWaiver,
      customerId: booking.customerId,
      slotEndsAt: booking.slot.endsAt,
    },
    await transferredSinceLegacyLink(deps.db, claims),
  );
  return {
    booking_id: booking.id,
    experience: { name: booking.experience.name },
    slot: { starts_at: booking.slot.startsAt.toISOString() },
    guest_count: booking.guestCount,
    waiver: { version: WAIVER_VERSION, text: WAIVER_TEXT },
    signatures: booking.waiverSignatures.map((signature) => ({
      participant_name: signature.participantName,
      signed_at: signature.signedAt.toISOString(),
    })),
  };
}
