-- Memberships: plans sold online and at the till, fixed-term passes and recurring subscriptions
-- billed by Stripe, the uses counted against their allowances, freezes, plan and price changes,
-- and the invoice facts Stripe reported. Rules Prisma cannot state (partial unique indexes, the
-- freeze exclusion constraint, CHECKs) live here only.

CREATE EXTENSION IF NOT EXISTS btree_gist;

-- AlterEnum: an online membership purchase is one more kind of order, sold as one more kind of line.
ALTER TYPE "order_kind" ADD VALUE 'membership';
ALTER TYPE "order_line_type" ADD VALUE 'membership';

-- CreateEnum
CREATE TYPE "membership_billing" AS ENUM ('fixed_term', 'recurring');

-- CreateEnum
CREATE TYPE "plan_interval" AS ENUM ('month', 'year');

-- CreateEnum
CREATE TYPE "allowance_period" AS ENUM ('month', 'term');

-- CreateEnum
CREATE TYPE "membership_status" AS ENUM ('pending_payment', 'active', 'frozen', 'past_due', 'paused_for_payment', 'expired', 'ended', 'cancelled');

-- CreateEnum
CREATE TYPE "membership_source" AS ENUM ('online', 'pos', 'import');

-- CreateEnum
CREATE TYPE "usage_kind" AS ENUM ('visit', 'guest_pass', 'benefit', 'discount');

-- CreateEnum
CREATE TYPE "usage_status" AS ENUM ('reserved', 'consumed', 'released');

-- CreateEnum
CREATE TYPE "freeze_status" AS ENUM ('booked', 'active', 'completed', 'cancelled');

-- CreateEnum
CREATE TYPE "change_kind" AS ENUM ('plan_change', 'price_change');

-- CreateEnum
CREATE TYPE "change_timing" AS ENUM ('now', 'period_end');

-- CreateEnum
CREATE TYPE "change_status" AS ENUM ('pending', 'applied', 'cancelled', 'failed');

-- CreateEnum
CREATE TYPE "requested_by" AS ENUM ('member', 'staff');

-- AlterTable
ALTER TABLE "customers" ADD COLUMN "stripe_customer_id" TEXT;

-- AlterTable
ALTER TABLE "bookings" ADD COLUMN "membership_id" UUID,
ADD COLUMN "member_discount_cents" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "orders" ADD COLUMN "membership_id" UUID,
ADD COLUMN "discount_cents" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "stripe_subscription_id" TEXT;

-- AlterTable
ALTER TABLE "order_lines" ADD COLUMN "plan_id" UUID,
ADD COLUMN "membership_id" UUID;

-- CreateTable
CREATE TABLE "membership_plans" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "billing" "membership_billing" NOT NULL,
    "price_cents" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "term_days" INTEGER,
    "term_months" INTEGER,
    "interval" "plan_interval",
    "interval_count" INTEGER NOT NULL DEFAULT 1,
    "stripe_product_id" TEXT,
    "stripe_price_id" TEXT,
    "allowance_period" "allowance_period" NOT NULL DEFAULT 'month',
    "visits_per_period" INTEGER,
    "guest_passes_per_period" INTEGER NOT NULL DEFAULT 0,
    "member_discount_percent" INTEGER NOT NULL DEFAULT 0,
    "discount_on_bookings" BOOLEAN NOT NULL DEFAULT true,
    "discount_on_retail" BOOLEAN NOT NULL DEFAULT true,
    "freeze_allowed" BOOLEAN NOT NULL DEFAULT false,
    "freeze_min_days" INTEGER NOT NULL DEFAULT 7,
    "freeze_max_days" INTEGER NOT NULL DEFAULT 90,
    "freezes_per_year" INTEGER NOT NULL DEFAULT 1,
    "freeze_notice_days" INTEGER NOT NULL DEFAULT 0,
    "freeze_fee_cents" INTEGER NOT NULL DEFAULT 0,
    "transferable" BOOLEAN NOT NULL DEFAULT false,
    "requires_photo" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "membership_plans_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "membership_plans_price_positive" CHECK ("price_cents" > 0),
    -- A fixed-term plan has a term (days or months); a recurring plan has an interval.
    CONSTRAINT "membership_plans_shape" CHECK (
        ("billing" = 'fixed_term' AND "interval" IS NULL AND (("term_days" IS NULL) <> ("term_months" IS NULL)))
        OR ("billing" = 'recurring' AND "interval" IS NOT NULL AND "term_days" IS NULL AND "term_months" IS NULL)),
    CONSTRAINT "membership_plans_allowances" CHECK (
        ("visits_per_period" IS NULL OR "visits_per_period" >= 0) AND "guest_passes_per_period" >= 0
        AND "member_discount_percent" BETWEEN 0 AND 100 AND "interval_count" BETWEEN 1 AND 12),
    CONSTRAINT "membership_plans_freeze_rules" CHECK (
        "freeze_min_days" >= 1 AND "freeze_max_days" >= "freeze_min_days" AND "freezes_per_year" >= 0
        AND "freeze_notice_days" >= 0 AND "freeze_fee_cents" >= 0)
);

-- CreateTable
CREATE TABLE "plan_benefits" (
    "id" UUID NOT NULL,
    "plan_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "quantity_per_period" INTEGER,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "plan_benefits_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "plan_benefits_quantity_positive" CHECK ("quantity_per_period" IS NULL OR "quantity_per_period" >= 1)
);

-- CreateTable
CREATE TABLE "memberships" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "plan_id" UUID NOT NULL,
    "billing" "membership_billing" NOT NULL,
    "order_id" UUID,
    "source" "membership_source" NOT NULL,
    "external_ref" TEXT,
    "customer_id" UUID NOT NULL,
    "holder_customer_id" UUID NOT NULL,
    "holder_photo_id" UUID,
    "status" "membership_status" NOT NULL,
    "starts_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "period_start" TIMESTAMPTZ(3),
    "price_cents" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "stripe_customer_id" TEXT,
    "stripe_subscription_id" TEXT,
    "stripe_price_id" TEXT,
    "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
    "end_requested_at" TIMESTAMPTZ(3),
    "end_requested_by" "requested_by",
    "ended_at" TIMESTAMPTZ(3),
    "end_reason" TEXT,
    "grace_ends_at" TIMESTAMPTZ(3),
    "stripe_synced_at" TIMESTAMPTZ(3),
    "token_version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "memberships_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "memberships_period" CHECK ("expires_at" IS NULL OR "starts_at" IS NULL OR "expires_at" > "starts_at")
);

-- CreateTable
CREATE TABLE "membership_photos" (
    "id" UUID NOT NULL,
    "membership_id" UUID NOT NULL,
    "holder_customer_id" UUID NOT NULL,
    "content_type" TEXT NOT NULL,
    "image" BYTEA NOT NULL,
    "sha256" TEXT NOT NULL,
    "actor_key_id" UUID,
    "captured_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "membership_photos_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "membership_usages" (
    "id" UUID NOT NULL,
    "membership_id" UUID NOT NULL,
    "kind" "usage_kind" NOT NULL,
    "status" "usage_status" NOT NULL,
    "quantity" INTEGER NOT NULL,
    "period_key" TEXT NOT NULL,
    "benefit_id" UUID,
    "booking_id" UUID,
    "order_id" UUID,
    "amount_cents" INTEGER,
    "actor_key_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "released_at" TIMESTAMPTZ(3),

    CONSTRAINT "membership_usages_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "membership_usages_quantity_positive" CHECK ("quantity" >= 1)
);

-- CreateTable
CREATE TABLE "membership_freezes" (
    "id" UUID NOT NULL,
    "membership_id" UUID NOT NULL,
    "starts_on" DATE NOT NULL,
    "ends_on" DATE NOT NULL,
    "status" "freeze_status" NOT NULL,
    "frozen_days" INTEGER,
    "fee_cents" INTEGER,
    "stripe_fee_invoice_id" TEXT,
    "requested_by" "requested_by" NOT NULL,
    "actor_key_id" UUID,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "membership_freezes_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "membership_freezes_dates" CHECK ("ends_on" >= "starts_on"),
    -- No two freezes of a membership overlap, whoever books them and however concurrently.
    CONSTRAINT "membership_freezes_no_overlap" EXCLUDE USING gist (
        "membership_id" WITH =, daterange("starts_on", "ends_on", '[]') WITH &&
    ) WHERE ("status" <> 'cancelled')
);

-- CreateTable
CREATE TABLE "membership_changes" (
    "id" UUID NOT NULL,
    "membership_id" UUID NOT NULL,
    "kind" "change_kind" NOT NULL,
    "status" "change_status" NOT NULL,
    "timing" "change_timing" NOT NULL,
    "from_plan_id" UUID NOT NULL,
    "to_plan_id" UUID NOT NULL,
    "from_price_id" TEXT,
    "to_price_id" TEXT,
    "from_price_cents" INTEGER NOT NULL,
    "to_price_cents" INTEGER NOT NULL,
    "effective_at" TIMESTAMPTZ(3) NOT NULL,
    "requested_by" "requested_by" NOT NULL,
    "actor_key_id" UUID,
    "invoice_id" TEXT,
    "provider_applied_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),

    CONSTRAINT "membership_changes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "membership_invoices" (
    "stripe_invoice_id" TEXT NOT NULL,
    "membership_id" UUID NOT NULL,
    "billing_reason" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "amount_due_cents" INTEGER NOT NULL,
    "amount_paid_cents" INTEGER NOT NULL DEFAULT 0,
    "currency" CHAR(3) NOT NULL,
    "price_id" TEXT,
    "period_start" TIMESTAMPTZ(3),
    "period_end" TIMESTAMPTZ(3),
    "paid_at" TIMESTAMPTZ(3),
    "review_reason" TEXT,
    "refunded_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "membership_invoices_pkey" PRIMARY KEY ("stripe_invoice_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "customers_stripe_customer_id_key" ON "customers"("stripe_customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "orders_stripe_subscription_id_key" ON "orders"("stripe_subscription_id");

-- CreateIndex
CREATE INDEX "membership_plans_tenant_id_idx" ON "membership_plans"("tenant_id");

-- CreateIndex
CREATE UNIQUE INDEX "plan_benefits_plan_id_name_key" ON "plan_benefits"("plan_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "memberships_stripe_subscription_id_key" ON "memberships"("stripe_subscription_id");

-- CreateIndex
CREATE UNIQUE INDEX "memberships_tenant_id_external_ref_key" ON "memberships"("tenant_id", "external_ref");

-- CreateIndex
CREATE INDEX "memberships_tenant_id_created_at_idx" ON "memberships"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "memberships_status_expires_at_idx" ON "memberships"("status", "expires_at");

-- CreateIndex
CREATE INDEX "memberships_customer_id_idx" ON "memberships"("customer_id");

-- CreateIndex
CREATE INDEX "membership_photos_membership_id_idx" ON "membership_photos"("membership_id");

-- CreateIndex
CREATE INDEX "membership_usages_membership_id_kind_period_key_idx" ON "membership_usages"("membership_id", "kind", "period_key");

-- CreateIndex
CREATE INDEX "membership_usages_booking_id_idx" ON "membership_usages"("booking_id");

-- CreateIndex
CREATE INDEX "membership_freezes_status_starts_on_idx" ON "membership_freezes"("status", "starts_on");

-- CreateIndex
CREATE INDEX "membership_changes_status_effective_at_idx" ON "membership_changes"("status", "effective_at");

-- CreateIndex
CREATE INDEX "membership_invoices_membership_id_idx" ON "membership_invoices"("membership_id");

-- One live recurring membership per customer and plan: a second purchase is refused and pointed
-- at the open one, never given a second subscription.
CREATE UNIQUE INDEX "memberships_one_live_recurring" ON "memberships"("customer_id", "plan_id")
    WHERE "billing" = 'recurring' AND "status" IN ('pending_payment', 'active', 'frozen', 'past_due', 'paused_for_payment');

-- One pending change per membership: a second request is refused until the first resolves.
CREATE UNIQUE INDEX "membership_changes_one_pending" ON "membership_changes"("membership_id") WHERE "status" = 'pending';

-- AddForeignKey
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "membership_plans"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_plans" ADD CONSTRAINT "membership_plans_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "plan_benefits" ADD CONSTRAINT "plan_benefits_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "membership_plans"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_plan_id_fkey" FOREIGN KEY ("plan_id") REFERENCES "membership_plans"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_holder_customer_id_fkey" FOREIGN KEY ("holder_customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_photos" ADD CONSTRAINT "membership_photos_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_usages" ADD CONSTRAINT "membership_usages_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_usages" ADD CONSTRAINT "membership_usages_benefit_id_fkey" FOREIGN KEY ("benefit_id") REFERENCES "plan_benefits"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_usages" ADD CONSTRAINT "membership_usages_booking_id_fkey" FOREIGN KEY ("booking_id") REFERENCES "bookings"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_usages" ADD CONSTRAINT "membership_usages_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_freezes" ADD CONSTRAINT "membership_freezes_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_changes" ADD CONSTRAINT "membership_changes_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_changes" ADD CONSTRAINT "membership_changes_from_plan_id_fkey" FOREIGN KEY ("from_plan_id") REFERENCES "membership_plans"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_changes" ADD CONSTRAINT "membership_changes_to_plan_id_fkey" FOREIGN KEY ("to_plan_id") REFERENCES "membership_plans"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership_invoices" ADD CONSTRAINT "membership_invoices_membership_id_fkey" FOREIGN KEY ("membership_id") REFERENCES "memberships"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
