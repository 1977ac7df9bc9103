-- A transfer supersedes the waiver signatures of the party that held the booking before: they
-- stay as evidence, marked with the transfer, and no longer count for the booking.
ALTER TABLE "waiver_signatures" ADD COLUMN "superseded_at" TIMESTAMPTZ(3),
ADD COLUMN "superseded_by_amendment_id" UUID;

-- AddForeignKey
ALTER TABLE "waiver_signatures" ADD CONSTRAINT "waiver_signatures_superseded_by_amendment_id_fkey" FOREIGN KEY ("superseded_by_amendment_id") REFERENCES "booking_amendments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- When and why go together (Prisma does not model CHECKs; this lives here only).
ALTER TABLE "waiver_signatures" ADD CONSTRAINT "waiver_signatures_superseded_check"
    CHECK (("superseded_at" IS NULL) = ("superseded_by_amendment_id" IS NULL));

-- One signature per participant among those that count: the new party may sign for a name the
-- previous one signed for, and the previous customer again after a transfer back. Partial, so
-- schema.prisma cannot state it.
DROP INDEX "waiver_signatures_booking_id_participant_key_key";
CREATE UNIQUE INDEX "waiver_signatures_current_participant_key" ON "waiver_signatures"("booking_id", "participant_key") WHERE "superseded_at" IS NULL;
