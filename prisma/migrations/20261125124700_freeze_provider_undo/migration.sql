-- What the freeze start job asked Stripe for a recurring membership's freeze, so that a freeze
-- cancelled while the job paused the subscription and billed the fee has both undone, and a
-- failed undo is retried by a later run: provider_requested_at is stamped (freeze still booked)
-- just before the job asks Stripe; provider_undone_at once a freeze cancelled before it started
-- has its subscription resumed and its fee invoice voided or refunded.
ALTER TABLE "membership_freezes" ADD COLUMN "provider_requested_at" TIMESTAMPTZ(3);
ALTER TABLE "membership_freezes" ADD COLUMN "provider_undone_at" TIMESTAMPTZ(3);

-- The undo sweep: cancelled freezes the job asked Stripe for and has not undone yet.
CREATE INDEX "membership_freezes_provider_undo_idx" ON "membership_freezes"("provider_requested_at")
    WHERE "status" = 'cancelled' AND "provider_requested_at" IS NOT NULL AND "provider_undone_at" IS NULL;
