-- Automatic refunds (a card payment that could not buy its seats, given back by the service) are
-- recorded as refunds too, marked so. The ones made before this were booked without a row.
ALTER TABLE "refunds" ADD COLUMN "automatic" BOOLEAN NOT NULL DEFAULT false;

-- payments.refund_due now means "the automatic refund is still to be recorded": it is cleared
-- when its answer is recorded. Payments refunded before this were done with it. Those still
-- `succeeded` keep it: their refund was never made, or made and never booked, and either a
-- redelivery of their payment event or Stripe's notification of that refund records it (the
-- refund notifications never wait for refund_due, so it blocks none of them).
UPDATE "payments" SET "refund_due" = false WHERE "refund_due" AND "status" = 'refunded';
