-- When the grace job last failed to end a membership past its grace (Stripe did not answer or
-- refused, or its subscription showed nothing to end it by): the job leaves it out until
-- MEMBERSHIP_RECONCILE_SECONDS from then, so memberships that keep failing cannot fill every batch
-- and hold back the ones behind them.
ALTER TABLE "memberships" ADD COLUMN "grace_end_failed_at" TIMESTAMPTZ(3);
