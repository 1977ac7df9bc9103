-- The unpaid-order job asked the provider again, on every run, about each online order past
-- pay_by whose payment it would not let go (processing, paid with its notification late, the
-- provider failing). Each run now claims the orders it asks about until this time, so each is
-- asked at most once an interval, whatever the runs and pods. Null: never claimed, asked as soon
-- as it is due.
ALTER TABLE "orders" ADD COLUMN "unpaid_check_after" TIMESTAMPTZ(3);

-- The stuck-refund job looks for operator refunds still pending with no provider refund, least
-- recently touched first: only those rows, a few at any time.
CREATE INDEX "order_refunds_stuck_operator_idx" ON "order_refunds"("updated_at")
  WHERE "source" = 'operator' AND "status" = 'pending' AND "provider_refund_id" IS NULL;
