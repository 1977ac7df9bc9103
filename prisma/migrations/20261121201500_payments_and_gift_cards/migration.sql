-- CreateEnum
CREATE TYPE "payment_method" AS ENUM ('card', 'gift_card', 'cash');

-- CreateEnum
CREATE TYPE "payment_status" AS ENUM ('succeeded', 'refunded');

-- AlterTable
ALTER TABLE "bookings" ADD COLUMN     "gift_card_applied_cents" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "gift_card_id" UUID,
ADD COLUMN     "hold_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "payment_intent_id" TEXT,
ADD COLUMN     "review_reason" TEXT;

-- Existing bookings were made from 10-minute holds.
UPDATE "bookings" SET "hold_expires_at" = "created_at" + interval '10 minutes';
ALTER TABLE "bookings" ALTER COLUMN "hold_expires_at" SET NOT NULL;

-- CreateTable
CREATE TABLE "payments" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "booking_id" UUID NOT NULL,
    "method" "payment_method" NOT NULL,
    "provider_reference" TEXT,
    "amount_cents" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "status" "payment_status" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "payments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "provider_events" (
    "id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "payments_provider_reference_key" ON "payments"("provider_reference");

-- CreateIndex
CREATE INDEX "payments_booking_id_idx" ON "payments"("booking_id");

-- CreateIndex
CREATE UNIQUE INDEX "bookings_payment_intent_id_key" ON "bookings"("payment_intent_id");

-- AddForeignKey
ALTER TABLE "bookings" ADD CONSTRAINT "bookings_gift_card_id_fkey" FOREIGN KEY ("gift_card_id") REFERENCES "gift_cards"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "payments" ADD CONSTRAINT "payments_booking_id_fkey" FOREIGN KEY ("booking_id") REFERENCES "bookings"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
