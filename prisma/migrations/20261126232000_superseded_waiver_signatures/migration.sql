-- A transfer supersedes the waiver signatures of the party that held the booking before: they
-- stay as evidence, marked with the transfer, and no longer count for the booking.
ALTER TABLE "waiver_signatures" ADD COLUMN "superseded_at" TIMESTAMPTZ(3),
ADD COLUMN "superseded_by_amendment_id" UUID;

-- AddForeignKey
ALTER TABLE "waiver_signatures" ADD CONSTRAINT "waiver_signatures_superseded_by_amendment_id_fkey" FOREIGN KEY ("superseded_by_amendment_id") REFERENCES "booking_amendments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- When and why go together (Prisma does not model CHECKs; this lives here only).
ALTER TABLE "waiver_signatures" ADD CONSTRAINT "waiver_signatures_superseded_check"
    CHECK (("superseded_at" IS NULL) = ("superseded_by_amendment_id" IS NULL));

-- The unique (booking_id, participant_key) index stays as it is, so pods of the previous release
-- (ON CONFLICT on those columns) keep signing during the rollout. A superseded signature's key
-- gets the transfer appended instead (see supersedeSignatures), which frees the participant for
-- the new party; participant_name keeps what was signed.
--
-- Bookings transferred before this release: signatures made before a transfer are superseded by
-- the first transfer after them.
UPDATE "waiver_signatures" s SET
  "superseded_at" = t."created_at",
  "superseded_by_amendment_id" = t."id",
  "participant_key" = s."participant_key" || '#superseded:' || t."id"
FROM (
  SELECT DISTINCT ON (w."id") w."id" AS signature_id, a."id", a."created_at"
  FROM "waiver_signatures" w
  JOIN "booking_amendments" a ON a."booking_id" = w."booking_id" AND a."kind" = 'transfer' AND a."created_at" > w."signed_at"
  ORDER BY w."id", a."created_at"
) t
WHERE s."id" = t.signature_id;
