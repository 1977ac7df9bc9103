-- Which end a membership's end request asks for. An end at period end lets the member keep the
-- current period, so money for a period that began before the request is kept; an end now gives
-- back whatever is paid from the request on. The column holds the request time of an end at
-- period end, and the request counts as one only while it equals end_requested_at: a later end
-- now takes the request over with its own time.
--
-- Nullable, with no default: pods of the previous release keep serving during the rollout and
-- write only end_requested_at, for either kind. Their requests (and an end now they stamp over a
-- period-end request) then fail the equality and are judged as before, as an end now, which
-- gives back more, never less.
ALTER TABLE "memberships" ADD COLUMN "period_end_requested_at" TIMESTAMPTZ(3);

-- Live memberships whose end was asked for and that the provider set to cancel at period end
-- asked for an end at period end. Ended ones were judged when they ended, and stay so.
UPDATE "memberships" SET "period_end_requested_at" = "end_requested_at"
WHERE "end_requested_at" IS NOT NULL AND "cancel_at_period_end"
  AND "status" NOT IN ('ended', 'expired', 'cancelled');
