-- The staff API key that asked for a membership's end, so membership.ended names the staff user
-- whichever path (the cancel request, the provider's notification, the reconcile job) records it.
ALTER TABLE "memberships" ADD COLUMN "end_requested_key_id" UUID;
