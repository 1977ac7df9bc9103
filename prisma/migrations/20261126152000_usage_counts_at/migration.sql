-- The instant each membership use counts at. Allowances were counted by period_key, a string
-- fixed when the use was recorded: a term plan's visit booked for a day in the next billing period
-- was keyed by the current period's start, so after the renewal the same days got a fresh
-- allowance. A period's uses are now those whose counts_at falls in it, whenever its bounds
-- become known; period_key stays as the period's name in answers and events.
--
-- Nullable, with no default, for this release: pods of the previous release keep serving during
-- the rollout and write no counts_at. A default (now()) would give their bookings' uses a wrong
-- instant for good; NULL marks them, and the service places them (place-uses.ts) under the
-- membership's lock before it counts that membership's uses.
ALTER TABLE "membership_usages" ADD COLUMN "counts_at" TIMESTAMPTZ(3);

-- A booking's own uses (its visit, guest passes and discount: no staff key) count at the visit,
-- the start of the booking's slot as it is now (a reschedule moved them with the booking).
UPDATE "membership_usages" AS u
SET "counts_at" = s."starts_at"
FROM "bookings" AS b
JOIN "slots" AS s ON s."id" = b."slot_id"
WHERE b."id" = u."booking_id" AND u."actor_key_id" IS NULL;

-- Uses at the desk and the till (guest passes linked to a booking too) count when they were made.
UPDATE "membership_usages" SET "counts_at" = "created_at" WHERE "counts_at" IS NULL;

DROP INDEX "membership_usages_membership_id_kind_period_key_idx";
CREATE INDEX "membership_usages_membership_id_kind_counts_at_idx" ON "membership_usages"("membership_id", "kind", "counts_at");
