-- The stuck booking refund job also asks Stripe, a day on, about refunds it answered pending (a
-- provider refund named) whose notification never came, least recently touched first: only those
-- rows, a few at any time. The index before this one covers those with no provider refund.
CREATE INDEX "refunds_unsettled_idx" ON "refunds"("updated_at")
  WHERE "status" = 'pending' AND "provider_refund_id" IS NOT NULL;
