-- The stuck booking refund job looks for refunds still pending with no provider refund (Stripe
-- never answered about them), least recently touched first: only those rows, a few at any time.
CREATE INDEX "refunds_stuck_idx" ON "refunds"("updated_at")
  WHERE "status" = 'pending' AND "provider_refund_id" IS NULL;
