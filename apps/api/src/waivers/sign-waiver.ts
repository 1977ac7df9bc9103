import { createHash, randomUUID } from 'node:crypto';
import type { Db, Tx } from '@booking/db';
import { AppError } from '@booking/domain';
import { recordEvent } from '@booking/events';
import { findBookingForUpdate } from '../locks';
import { CURRENT_SIGNATURES } from './current-signatures';
import type { SignWaiverRequest, WaiverSignatureResponse } from './waiver-schemas';
import { WAIVER_TEXT, WAIVER_VERSION } from './waiver-text';
import { assertWaiverOpen, transferredSinceLegacyLink, type WaiverClaims } from './waiver-token';

const MAX_USER_AGENT_LENGTH = 512;

/** Where the signature came from, kept with the evidence. */
export interface SigningContext {
  ip: string | undefined;
  userAgent: string | undefined;
}

interface StoredSignature {
  id: string;
  bookingId: string;
  participantName: string;
  waiverVersion: string;
  signedAt: Date;
  evidenceHash: string;
}

/** One participant per lower-cased, trimmed name. */
export function participantKey(name: string): string {
  return name.trim().toLowerCase();
}

/** What was agreed to, by whom, for whom and when, as one SHA-256. */
export function evidenceHash(fields: {
  bookingId: string;
  participantName: string;
  signerName: string;
  signedAt: Date;
}): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        WAIVER_TEXT,
        WAIVER_VERSION,
        fields.bookingId,
        fields.participantName,
        fields.signerName,
        fields.signedAt.toISOString(),
      ]),
    )
    .digest('hex');
}

/**
 * Signs the booking's waiver for one participant. Signing again for the same participant
 * changes nothing and answers the evidence already stored; only new evidence records
 * waiver.signed, which names the evidence and the booking, never the people.
 *
 * Only the current party's signatures count, for the repeat, the cap and the key: those a
 * transfer superseded belong to people who are no longer coming.
 *
 * The booking row's lock queues signers of the same booking, so the guest_count cap holds under
 * concurrency; the unique (booking, participant) key with ON CONFLICT DO NOTHING makes a double
 * signature one row whatever happens (a superseded signature's key carries its transfer).
 */
export async function signWaiver(
  deps: { db: Db },
  claims: WaiverClaims,
  request: SignWaiverRequest,
  context: SigningContext,
): Promise<WaiverSignatureResponse> {
  const participantName = request.participant_name.trim();
  const signerName = request.signer_name.trim();
  const key = participantKey(participantName);
  const { bookingId, tenantId } = claims;

  const { signature, created } = await deps.db.$transaction(async (tx) => {
    const booking = await findBookingForUpdate(tx, bookingId, { tenantId });
    if (!booking) throw new AppError('waiver_not_found');
    // The visit as it is now: a reschedule moves how long its waiver stays open.
    const slot = await tx.slot.findUniqueOrThrow({ where: { id: booking.slotId }, select: { endsAt: true } });
    assertWaiverOpen(claims, { ...booking, slotEndsAt: slot.endsAt }, await transferredSinceLegacyLink(tx, claims));
    if (request.waiver_version !== WAIVER_VERSION) {
      throw new AppError('waiver_version_outdated', { current_version: WAIVER_VERSION });
    }

    const existing = await findSignature(tx, bookingId, key);
    if (existing) return { signature: existing, created: false };
    const signed = await tx.waiverSignature.count({ where: { bookingId, ...CURRENT_SIGNATURES } });
    if (signed >= booking.guestCount) {
      throw new AppError('waiver_signatures_complete', { guest_count: booking.guestCount });
    }

    const id = randomUUID();
    const signedAt = new Date();
    const hash = evidenceHash({ bookingId, participantName, signerName, signedAt });
    const inserted = await tx.$executeRaw`
      INSERT INTO waiver_signatures (id, tenant_id, booking_id, participant_key, participant_name, signer_name,
                                     evidence_hash, waiver_version, ip_address, user_agent, signed_at)
      VALUES (${id}::uuid, ${tenantId}::uuid, ${bookingId}::uuid, ${key}, ${participantName}, ${signerName},
              ${hash}, ${WAIVER_VERSION}, ${context.ip ?? null}, ${context.userAgent?.slice(0, MAX_USER_AGENT_LENGTH) ?? null},
              ${signedAt})
      ON CONFLICT (booking_id, participant_key) DO NOTHING`;
    if (inserted === 0) return { signature: (await findSignature(tx, bookingId, key))!, created: false };

    await recordEvent(tx, {
      tenantId,
      name: 'waiver.signed',
      entityType: 'booking',
      entityId: bookingId,
      // Evidence identifiers only: no names, signature data or links.
      fields: { waiver_id: id, booking_id: bookingId },
    });
    const signature: StoredSignature = {
      id,
      bookingId,
      participantName,
      waiverVersion: WAIVER_VERSION,
      signedAt,
      evidenceHash: hash,
    };
    return { signature, created: true };
  });

  return {
    waiver_id: signature.id,
    booking_id: signature.bookingId,
    participant_name: signature.participantName,
    waiver_version: signature.waiverVersion,
    signed_at: signature.signedAt.toISOString(),
    evidence_hash: signature.evidenceHash,
    already_signed: !created,
  };
}

function findSignature(tx: Tx, bookingId: string, key: string): Promise<StoredSignature | null> {
  return tx.waiverSignature.findFirst({
    where: { bookingId, participantKey: key, ...CURRENT_SIGNATURES },
    select: {
      id: true,
      bookingId: true,
      participantName: true,
      waiverVersion: true,
      signedAt: true,
      evidenceHash: true,
    },
  });
}
