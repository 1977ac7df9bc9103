-- The unpaid-orders sweep asks Stripe about late payments' refunds still pending a day after they
-- were booked or last asked about, oldest first: only those rows, a few at any time.
CREATE INDEX "order_refunds_stale_late_payment_idx" ON "order_refunds"("updated_at")
  WHERE "source" = 'late_payment' AND "status" = 'pending';
