-- The stuck-refund job also asks Stripe, a day on, about operator refunds it answered pending
-- (a provider refund named) whose notification never came, least recently touched first: only
-- those rows, a few at any time. The index before this one covers those with no provider refund.
CREATE INDEX "order_refunds_unsettled_operator_idx" ON "order_refunds"("updated_at")
  WHERE "source" = 'operator' AND "status" = 'pending' AND "provider_refund_id" IS NOT NULL;
