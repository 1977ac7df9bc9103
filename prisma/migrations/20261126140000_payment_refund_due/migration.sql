-- A card payment that could not be kept (it arrived for a booking it could no longer pay for) is
-- refunded automatically after its notification commits. The mark is the payment's own, so a
-- redelivery of that notification retries the refund whatever became of the booking since.
ALTER TABLE "payments" ADD COLUMN "refund_due" BOOLEAN NOT NULL DEFAULT false;

-- Until now the mark was the booking's review_reason, set only for such a payment, and a booking
-- has one card payment (its PaymentIntent is unique).
UPDATE "payments" p SET "refund_due" = true
  FROM "bookings" b
 WHERE b."id" = p."booking_id" AND p."method" = 'card' AND b."review_reason" IS NOT NULL;
