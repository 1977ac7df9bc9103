-- The Idempotency-Key reference (see the API's idempotency middleware) of the request that made
-- each operator refund. A retry of that request after an answer that never reached its client, or
-- after a 5xx once the refund was reserved, finds this refund again instead of reserving and
-- paying out a second one.
ALTER TABLE "refunds" ADD COLUMN "idempotency_ref" TEXT;
CREATE UNIQUE INDEX "refunds_idempotency_ref_key" ON "refunds"("idempotency_ref");

ALTER TABLE "order_refunds" ADD COLUMN "idempotency_ref" TEXT;
CREATE UNIQUE INDEX "order_refunds_idempotency_ref_key" ON "order_refunds"("idempotency_ref");
