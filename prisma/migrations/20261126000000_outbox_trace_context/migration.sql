-- The W3C trace context (traceparent, and tracestate when there is one) of the request or job
-- that recorded the event, so its deliveries continue that trace. Null when tracing is off.
ALTER TABLE "events" ADD COLUMN "traceparent" TEXT, ADD COLUMN "tracestate" TEXT;
