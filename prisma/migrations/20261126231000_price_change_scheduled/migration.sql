-- When a plan's latest price change was scheduled, and by which admin key. Memberships that join
-- the plan from then on (a purchase paid, a plan change into it applied) on an older Price follow
-- it; those on the plan before keep their price, so no one is repriced just because this version
-- was deployed. The key is the actor_user_id of every price_change the change gives, also those
-- the apply-price-changes job gives while the admin's own request is still going through the plan.
--
-- Nullable, with no default: a price change that applied before this migration has none, and
-- nobody follows it (its members, on whatever Price, keep it).
ALTER TABLE "membership_plans" ADD COLUMN "price_change_scheduled_at" TIMESTAMPTZ(3),
ADD COLUMN "price_change_scheduled_by_key_id" UUID;

-- A price change still scheduled: no earlier than its first price_change (or, with none, the
-- plan's last update), by the admin whose request gave it.
UPDATE "membership_plans" p SET
  "price_change_scheduled_at" = COALESCE(
    (SELECT min(c."created_at") FROM "membership_changes" c
     WHERE c."to_plan_id" = p."id" AND c."kind" = 'price_change' AND c."to_price_id" = p."next_stripe_price_id"),
    p."updated_at"),
  "price_change_scheduled_by_key_id" = (
    SELECT c."actor_key_id" FROM "membership_changes" c
    WHERE c."to_plan_id" = p."id" AND c."kind" = 'price_change' AND c."to_price_id" = p."next_stripe_price_id"
      AND c."actor_key_id" IS NOT NULL
    ORDER BY c."created_at" LIMIT 1)
WHERE p."next_stripe_price_id" IS NOT NULL;
