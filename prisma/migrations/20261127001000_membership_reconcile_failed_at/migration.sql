-- When the reconcile job last failed to read a membership's subscription from Stripe: the job
-- waits MEMBERSHIP_RECONCILE_SECONDS from then before it tries again. It used to stamp
-- stripe_synced_at instead, which also means "converged from a read taken then": a notification
-- whose read was taken just before a failure then left the status unconverged. Rows stamped so
-- before this version cannot be told apart and are left as they are (the next read corrects them).
ALTER TABLE "memberships" ADD COLUMN "reconcile_failed_at" TIMESTAMPTZ(3);
