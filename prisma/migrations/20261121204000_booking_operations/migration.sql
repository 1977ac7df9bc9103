-- CreateEnum
CREATE TYPE "refund_status" AS ENUM ('pending', 'succeeded', 'failed');

-- AlterTable
ALTER TABLE "bookings" ADD COLUMN     "reissued_gift_card_id" UUID;

-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "anonymised_at" TIMESTAMPTZ(3),
ADD COLUMN     "marketing_opt_in" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "tags" TEXT[];

-- AlterTable
ALTER TABLE "gift_cards" ADD COLUMN     "initial_balance_cents" INTEGER NOT NULL DEFAULT 0;

-- Cards issued before this migration started with the balance they have left at most.
UPDATE "gift_cards" SET "initial_balance_cents" = "balance_cents";

-- AlterTable
ALTER TABLE "payments" ADD COLUMN     "refunded_cents" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "shift_id" UUID;

-- Card payments refunded automatically before this migration were refunded in full.
UPDATE "payments" SET "refunded_cents" = "amount_cents" WHERE "status" = 'refunded';

-- CreateTable
CREATE TABLE "refunds" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "booking_id" UUID NOT NULL,
    "payment_id" UUID NOT NULL,
    "provider_refund_id" TEXT,
    "amount_cents" INTEGER NOT NULL,
    "reason" TEXT,
    "status" "refund_status" NOT NULL,
    "keep_booking_active" BOOLEAN NOT NULL DEFAULT false,
    "actor_key_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "gift_card_sales" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "gift_card_id" UUID NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "method" "payment_method" NOT NULL,
    "payment_reference" TEXT,
    "shift_id" UUID,
    "actor_key_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "gift_card_sales_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "booking_amendments" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "booking_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "guest_delta" INTEGER NOT NULL DEFAULT 0,
    "amount_delta_cents" INTEGER NOT NULL DEFAULT 0,
    "from_slot_id" UUID,
    "to_slot_id" UUID,
    "from_customer_id" UUID,
    "to_customer_id" UUID,
    "reason" TEXT,
    "actor_key_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "booking_amendments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "waiver_signatures" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "booking_id" UUID NOT NULL,
    "participant_key" TEXT NOT NULL,
    "participant_name" TEXT NOT NULL,
    "signer_name" TEXT NOT NULL,
    "evidence_hash" TEXT NOT NULL,
    "waiver_version" TEXT NOT NULL,
    "ip_address" TEXT,
    "user_agent" TEXT,
    "signed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "waiver_signatures_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "pos_shifts" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "venue_id" UUID,
    "opened_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "opened_by_key_id" UUID NOT NULL,
    "starting_cash_cents" INTEGER NOT NULL,
    "closed_at" TIMESTAMPTZ(3),
    "closed_by_key_id" UUID,
    "ending_cash_cents" INTEGER,
    "expected_cash_cents" INTEGER,
    "variance_cents" INTEGER,

    CONSTRAINT "pos_shifts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "bookings_reissued_gift_card_id_key" ON "bookings"("reissued_gift_card_id");

-- CreateIndex
CREATE UNIQUE INDEX "refunds_provider_refund_id_key" ON "refunds"("provider_refund_id");

-- CreateIndex
CREATE INDEX "refunds_booking_id_idx" ON "refunds"("booking_id");

-- CreateIndex
CREATE INDEX "refunds_payment_id_idx" ON "refunds"("payment_id");

-- CreateIndex
CREATE UNIQUE INDEX "gift_card_sales_gift_card_id_key" ON "gift_card_sales"("gift_card_id");

-- CreateIndex
CREATE INDEX "gift_card_sales_tenant_id_created_at_idx" ON "gift_card_sales"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "booking_amendments_booking_id_idx" ON "booking_amendments"("booking_id");

-- CreateIndex
CREATE UNIQUE INDEX "waiver_signatures_booking_id_participant_key_key" ON "waiver_signatures"("booking_id", "participant_key");

-- CreateIndex
CREATE INDEX "pos_shifts_tenant_id_closed_at_idx" ON "pos_shifts"("tenant_id", "closed_at");

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_shift_id_fkey" FOREIGN KEY ("shift_id") REFERENCES "pos_shifts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_booking_id_fkey" FOREIGN KEY ("booking_id") REFERENCES "bookings"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_payment_id_fkey" FOREIGN KEY ("payment_id") REFERENCES "payments"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "gift_card_sales" ADD CONSTRAINT "gift_card_sales_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "gift_card_sales" ADD CONSTRAINT "gift_card_sales_gift_card_id_fkey" FOREIGN KEY ("gift_card_id") REFERENCES "gift_cards"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "gift_card_sales" ADD CONSTRAINT "gift_card_sales_shift_id_fkey" FOREIGN KEY ("shift_id") REFERENCES "pos_shifts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "booking_amendments" ADD CONSTRAINT "booking_amendments_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "booking_amendments" ADD CONSTRAINT "booking_amendments_booking_id_fkey" FOREIGN KEY ("booking_id") REFERENCES "bookings"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "waiver_signatures" ADD CONSTRAINT "waiver_signatures_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "waiver_signatures" ADD CONSTRAINT "waiver_signatures_booking_id_fkey" FOREIGN KEY ("booking_id") REFERENCES "bookings"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "pos_shifts" ADD CONSTRAINT "pos_shifts_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
