import type { Prisma, Tx } from '@booking/db';

/**
 * The signatures that count for a booking: those of the party that holds it now. Everything that
 * shows, counts or caps a booking's signatures reads through this.
 */
export const CURRENT_SIGNATURES = { supersededAt: null } satisfies Prisma.WaiverSignatureWhereInput;

/**
 * A transfer gives the booking to another party, who signs for the people actually coming; the
 * previous party's signatures are no longer theirs to see or to count, but they are evidence of
 * what was agreed, so they are marked with the transfer rather than deleted. The caller holds the
 * booking's lock, which every signer takes too, so no signature lands between the transfer and this.
 */
export async function supersedeSignatures(
  tx: Tx,
  transfer: { bookingId: string; amendmentId: string; at: Date },
): Promise<void> {
  // The participant key gets the transfer appended: the unique (booking, participant) key then
  // lets the new party (or the same customer, after a transfer back) sign for that name again,
  // while participant_name keeps what was signed.
  await tx.$executeRaw`
    UPDATE waiver_signatures
    SET superseded_at = ${transfer.at}, superseded_by_amendment_id = ${transfer.amendmentId}::uuid,
        participant_key = participant_key || '#superseded:' || ${transfer.amendmentId}
    WHERE booking_id = ${transfer.bookingId}::uuid AND superseded_at IS NULL`;
}
