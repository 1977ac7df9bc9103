-- A card payment that did not cover what its held booking owed (less than that, or in another
-- currency: an intent made in Stripe's dashboard, say) never paid for the booking. It is refunded
-- automatically like a late payment, but its refund leaves the booking as it was (still held and
-- payable): the mark is the payment's own, so every path that books that refund sees it.
ALTER TABLE "payments" ADD COLUMN "mismatched" BOOLEAN NOT NULL DEFAULT false;
