-- Records a batch of webhook attempts (the dispatcher's group commit) in one call: one round
-- trip and one implicit transaction, where the dispatcher used to send BEGIN, a locking SELECT,
-- the write and COMMIT, each waiting for the one before.
--
-- Each statement of a VOLATILE function takes a fresh snapshot (READ COMMITTED), so the write
-- below sees every attempt committed before the locks were granted: attempt numbers never repeat
-- when two runs of one delivery's job meet, and the schedule follows the delivery's attempt count
-- as it is under the lock (a redeliver during the attempt starts the new schedule with it).
--
-- For each attempt, in the order given, it returns the delivery's new status and the wait before
-- its next attempt (0 when there is none); and the endpoints this batch disabled.
CREATE FUNCTION "record_webhook_attempts"(
    p_delivery_ids uuid[],
    p_started_at timestamptz[],
    p_duration_ms int[],
    p_status_code int[],
    p_error text[],
    p_response_body text[],
    p_succeeded boolean[],
    p_endpoint_ids uuid[],
    p_lead_failures int[],
    p_has_success boolean[],
    p_trail_failures int[],
    p_longest_run int[],
    p_retry_delays_ms bigint[],
    p_auto_disable_after int,
    OUT statuses text[],
    OUT next_delays_ms bigint[],
    OUT disabled_endpoints uuid[]
) LANGUAGE plpgsql AS $$
DECLARE
  -- When the locks were granted: a retry's delay counts from then, as the delayed job's does.
  locked_at timestamptz;
BEGIN
  -- Deliveries, then endpoints, each in id order, so two batches (of two dispatchers) never wait
  -- on each other in a circle.
  PERFORM 1 FROM "webhook_deliveries" WHERE "id" = ANY(p_delivery_ids) ORDER BY "id" FOR NO KEY UPDATE;
  -- Only failures can disable an endpoint, and deciding that needs its run read under its lock. A
  -- batch of successes to one endpoint only resets its run (an UPDATE that locks the one row
  -- itself, when the run is not 0 already), so such batches do not queue behind each other.
  IF cardinality(p_endpoint_ids) > 1 OR false = ANY(p_succeeded) THEN
    PERFORM 1 FROM "webhook_endpoints" WHERE "id" = ANY(p_endpoint_ids) ORDER BY "id" FOR NO KEY UPDATE;
  END IF;
  locked_at := clock_timestamp();

  WITH input AS (
    SELECT i.*,
           -- The attempt made now: the last of the schedule abandons the delivery.
           d."attempt_count" + 1 AS made,
           CASE WHEN i.succeeded THEN 'succeeded'
                WHEN d."attempt_count" + 1 >= cardinality(p_retry_delays_ms) THEN 'abandoned'
                ELSE 'pending' END AS status,
           CASE WHEN i.succeeded OR d."attempt_count" + 1 >= cardinality(p_retry_delays_ms) THEN 0::bigint
                ELSE p_retry_delays_ms[d."attempt_count" + 2] END AS next_delay_ms
      FROM unnest(p_delivery_ids, p_started_at, p_duration_ms, p_status_code, p_error, p_response_body, p_succeeded)
           WITH ORDINALITY AS i(delivery_id, started_at, duration_ms, status_code, error, response_body, succeeded, ord)
      JOIN "webhook_deliveries" d ON d."id" = i.delivery_id
  ),
  attempts AS (
    INSERT INTO "webhook_attempts"
      ("id", "delivery_id", "attempt_number", "started_at", "duration_ms", "status_code", "error", "response_body", "succeeded")
    SELECT gen_random_uuid(), i.delivery_id,
           (SELECT count(*) FROM "webhook_attempts" a WHERE a."delivery_id" = i.delivery_id) + 1,
           i.started_at, i.duration_ms, i.status_code, i.error, i.response_body, i.succeeded
      FROM unnest(p_delivery_ids, p_started_at, p_duration_ms, p_status_code, p_error, p_response_body, p_succeeded)
           AS i(delivery_id, started_at, duration_ms, status_code, error, response_body, succeeded)
  ),
  deliveries AS (
    UPDATE "webhook_deliveries" d SET
      "attempt_count" = i.made,
      "last_attempt_at" = i.started_at,
      "status" = i.status::"webhook_delivery_status",
      "next_attempt_at" = CASE WHEN i.status = 'pending' THEN locked_at + i.next_delay_ms * interval '1 millisecond' END,
      "updated_at" = now()
    FROM input i WHERE d."id" = i.delivery_id
  ),
  runs AS (
    SELECT * FROM unnest(p_endpoint_ids, p_lead_failures, p_has_success, p_trail_failures, p_longest_run)
      AS r(endpoint_id, lead_failures, has_success, trail_failures, longest_run)
  ),
  before AS (
    SELECT e."id", e."status", e."consecutive_failures",
           (r.lead_failures > 0 AND e."consecutive_failures" + r.lead_failures >= p_auto_disable_after)
             OR r.longest_run >= p_auto_disable_after AS reaches
      FROM "webhook_endpoints" e JOIN runs r ON r.endpoint_id = e."id"
  ),
  endpoints AS (
    UPDATE "webhook_endpoints" e SET
      "consecutive_failures" = CASE WHEN r.has_success THEN r.trail_failures
                                    ELSE e."consecutive_failures" + r.lead_failures END,
      "status" = CASE WHEN b.reaches THEN 'disabled'::"webhook_endpoint_status" ELSE e."status" END,
      "disabled_at" = CASE WHEN b.reaches AND e."status" = 'active' THEN now() ELSE e."disabled_at" END,
      "updated_at" = now()
    FROM runs r JOIN before b ON b."id" = r.endpoint_id
    WHERE e."id" = r.endpoint_id
      AND (r.lead_failures > 0 OR r.longest_run > 0 OR e."consecutive_failures" > 0)
    RETURNING e."id", (b.reaches AND b."status" = 'active') AS just_disabled
  )
  SELECT (SELECT array_agg(i.status ORDER BY i.ord) FROM input i),
         (SELECT array_agg(i.next_delay_ms ORDER BY i.ord) FROM input i),
         (SELECT coalesce(array_agg(e."id"), '{}') FROM endpoints e WHERE e.just_disabled)
    INTO statuses, next_delays_ms, disabled_endpoints;
END
$$;
