-- A plan's scheduled price for new buyers: set by an operator's price change, made the plan's
-- price by the apply-price-changes job once next_price_effective_at has come.
ALTER TABLE "membership_plans" ADD COLUMN "next_price_cents" INTEGER,
ADD COLUMN "next_stripe_price_id" TEXT,
ADD COLUMN "next_price_effective_at" TIMESTAMPTZ(3);

ALTER TABLE "membership_plans" ADD CONSTRAINT "membership_plans_next_price_whole" CHECK (
  ("next_price_cents" IS NULL) = ("next_stripe_price_id" IS NULL)
  AND ("next_price_cents" IS NULL) = ("next_price_effective_at" IS NULL)
  AND ("next_price_cents" IS NULL OR "next_price_cents" >= 0)
);
