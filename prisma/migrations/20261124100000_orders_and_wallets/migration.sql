-- Orders and wallets: online wallet top-ups, retail POS orders with split tenders, and stored
-- value kept in an append-only ledger that the database itself keeps consistent.

-- CreateEnum
CREATE TYPE "order_channel" AS ENUM ('online', 'pos');

-- CreateEnum
CREATE TYPE "order_kind" AS ENUM ('wallet_topup', 'retail');

-- CreateEnum
CREATE TYPE "order_status" AS ENUM ('pending_payment', 'paid', 'cancelled', 'open', 'confirmed', 'voided');

-- CreateEnum
CREATE TYPE "order_line_type" AS ENUM ('product', 'wallet_load');

-- CreateEnum
CREATE TYPE "tender_type" AS ENUM ('card', 'cash', 'wallet', 'gift_card');

-- CreateEnum
CREATE TYPE "tender_status" AS ENUM ('held', 'captured', 'released');

-- CreateEnum
CREATE TYPE "order_refund_status" AS ENUM ('pending', 'succeeded', 'failed');

-- CreateEnum
CREATE TYPE "order_refund_source" AS ENUM ('operator', 'provider', 'dispute', 'late_payment', 'void');

-- CreateEnum
CREATE TYPE "wallet_entry_kind" AS ENUM ('fund', 'hold', 'release', 'capture', 'refund_credit', 'funding_return', 'expire', 'adjustment');

-- CreateEnum
CREATE TYPE "wallet_lot_source" AS ENUM ('online_topup', 'pos_load', 'refund_credit', 'adjustment');

-- CreateEnum
CREATE TYPE "wallet_token_kind" AS ENUM ('card', 'qr');

-- CreateEnum
CREATE TYPE "wallet_token_status" AS ENUM ('active', 'revoked');

-- AlterTable
ALTER TABLE "gift_cards" ADD COLUMN     "held_cents" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "wallets" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "balance_cents" INTEGER NOT NULL DEFAULT 0,
    "held_cents" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallets_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_lots" (
    "id" UUID NOT NULL,
    "wallet_id" UUID NOT NULL,
    "source" "wallet_lot_source" NOT NULL,
    "order_id" UUID,
    "amount_cents" INTEGER NOT NULL,
    "remaining_cents" INTEGER NOT NULL,
    "expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_lots_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_entries" (
    "id" UUID NOT NULL,
    "seq" BIGSERIAL NOT NULL,
    "wallet_id" UUID NOT NULL,
    "kind" "wallet_entry_kind" NOT NULL,
    "balance_delta" INTEGER NOT NULL,
    "held_delta" INTEGER NOT NULL,
    "balance_after" INTEGER NOT NULL DEFAULT 0,
    "held_after" INTEGER NOT NULL DEFAULT 0,
    "lot_id" UUID,
    "order_id" UUID,
    "tender_id" UUID,
    "refund_id" UUID,
    "actor_key_id" UUID,
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "wallet_tokens" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "wallet_id" UUID NOT NULL,
    "kind" "wallet_token_kind" NOT NULL,
    "token_hash" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "status" "wallet_token_status" NOT NULL DEFAULT 'active',
    "replaced_by_id" UUID,
    "issued_by_key_id" UUID NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),
    "revoked_by_key_id" UUID,
    "revoke_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "wallet_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "orders" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "channel" "order_channel" NOT NULL,
    "kind" "order_kind" NOT NULL,
    "status" "order_status" NOT NULL,
    "customer_id" UUID,
    "wallet_id" UUID,
    "shift_id" UUID,
    "venue_id" UUID,
    "currency" CHAR(3) NOT NULL,
    "total_cents" INTEGER NOT NULL,
    "paid_cents" INTEGER NOT NULL DEFAULT 0,
    "refunded_cents" INTEGER NOT NULL DEFAULT 0,
    "confirmed_unpaid" BOOLEAN NOT NULL DEFAULT false,
    "payment_intent_id" TEXT,
    "pay_by" TIMESTAMPTZ(3),
    "review_reason" TEXT,
    "actor_key_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "paid_at" TIMESTAMPTZ(3),
    "confirmed_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),
    "voided_at" TIMESTAMPTZ(3),

    CONSTRAINT "orders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_lines" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "type" "order_line_type" NOT NULL,
    "sku" TEXT,
    "description" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_price_cents" INTEGER NOT NULL,
    "total_cents" INTEGER NOT NULL,
    "wallet_id" UUID,
    "returned_cents" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "order_lines_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_tenders" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "type" "tender_type" NOT NULL,
    "status" "tender_status" NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "refunded_cents" INTEGER NOT NULL DEFAULT 0,
    "wallet_id" UUID,
    "wallet_token_id" UUID,
    "gift_card_id" UUID,
    "payment_reference" TEXT,
    "shift_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "captured_at" TIMESTAMPTZ(3),
    "released_at" TIMESTAMPTZ(3),

    CONSTRAINT "order_tenders_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "order_refunds" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "tender_id" UUID,
    "line_id" UUID,
    "source" "order_refund_source" NOT NULL,
    "status" "order_refund_status" NOT NULL,
    "amount_cents" INTEGER NOT NULL,
    "debited_cents" INTEGER NOT NULL DEFAULT 0,
    "shortfall_cents" INTEGER NOT NULL DEFAULT 0,
    "reason" TEXT,
    "provider_refund_id" TEXT,
    "shift_id" UUID,
    "actor_key_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "order_refunds_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "wallets_tenant_id_customer_id_currency_key" ON "wallets"("tenant_id", "customer_id", "currency");

-- CreateIndex
CREATE INDEX "wallet_lots_wallet_id_idx" ON "wallet_lots"("wallet_id");

-- CreateIndex
CREATE INDEX "wallet_lots_expires_at_idx" ON "wallet_lots"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "wallet_entries_seq_key" ON "wallet_entries"("seq");

-- CreateIndex
CREATE INDEX "wallet_entries_wallet_id_seq_idx" ON "wallet_entries"("wallet_id", "seq");

-- CreateIndex
CREATE INDEX "wallet_tokens_wallet_id_idx" ON "wallet_tokens"("wallet_id");

-- CreateIndex
CREATE UNIQUE INDEX "wallet_tokens_tenant_id_token_hash_key" ON "wallet_tokens"("tenant_id", "token_hash");

-- CreateIndex
CREATE UNIQUE INDEX "orders_payment_intent_id_key" ON "orders"("payment_intent_id");

-- CreateIndex
CREATE INDEX "orders_tenant_id_created_at_idx" ON "orders"("tenant_id", "created_at");

-- CreateIndex
CREATE INDEX "orders_status_pay_by_idx" ON "orders"("status", "pay_by");

-- CreateIndex
CREATE UNIQUE INDEX "order_lines_order_id_position_key" ON "order_lines"("order_id", "position");

-- CreateIndex
CREATE UNIQUE INDEX "order_tenders_payment_reference_key" ON "order_tenders"("payment_reference");

-- CreateIndex
CREATE INDEX "order_tenders_order_id_idx" ON "order_tenders"("order_id");

-- CreateIndex
CREATE UNIQUE INDEX "order_refunds_provider_refund_id_key" ON "order_refunds"("provider_refund_id");

-- CreateIndex
CREATE INDEX "order_refunds_order_id_idx" ON "order_refunds"("order_id");

-- AddForeignKey
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_lots" ADD CONSTRAINT "wallet_lots_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_entries" ADD CONSTRAINT "wallet_entries_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_tokens" ADD CONSTRAINT "wallet_tokens_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "wallet_tokens" ADD CONSTRAINT "wallet_tokens_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_shift_id_fkey" FOREIGN KEY ("shift_id") REFERENCES "pos_shifts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_tenders" ADD CONSTRAINT "order_tenders_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_tenders" ADD CONSTRAINT "order_tenders_wallet_id_fkey" FOREIGN KEY ("wallet_id") REFERENCES "wallets"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_tenders" ADD CONSTRAINT "order_tenders_gift_card_id_fkey" FOREIGN KEY ("gift_card_id") REFERENCES "gift_cards"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_tenders" ADD CONSTRAINT "order_tenders_shift_id_fkey" FOREIGN KEY ("shift_id") REFERENCES "pos_shifts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_refunds" ADD CONSTRAINT "order_refunds_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_refunds" ADD CONSTRAINT "order_refunds_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_refunds" ADD CONSTRAINT "order_refunds_tender_id_fkey" FOREIGN KEY ("tender_id") REFERENCES "order_tenders"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "order_refunds" ADD CONSTRAINT "order_refunds_shift_id_fkey" FOREIGN KEY ("shift_id") REFERENCES "pos_shifts"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- Money rules the database keeps whatever the code does (Prisma does not model CHECKs or
-- triggers; they live here only).

ALTER TABLE "wallets" ADD CONSTRAINT "wallets_balance_check"
    CHECK ("balance_cents" >= 0 AND "held_cents" >= 0 AND "held_cents" <= "balance_cents");
ALTER TABLE "wallet_lots" ADD CONSTRAINT "wallet_lots_remaining_check"
    CHECK ("amount_cents" > 0 AND "remaining_cents" >= 0 AND "remaining_cents" <= "amount_cents");
ALTER TABLE "gift_cards" ADD CONSTRAINT "gift_cards_held_check"
    CHECK ("held_cents" >= 0 AND "held_cents" <= "balance_cents");
ALTER TABLE "orders" ADD CONSTRAINT "orders_money_check"
    CHECK ("total_cents" >= 0 AND "paid_cents" >= 0 AND "refunded_cents" >= 0 AND "refunded_cents" <= "paid_cents");
ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_money_check"
    CHECK ("quantity" > 0 AND "unit_price_cents" >= 0 AND "total_cents" = "quantity" * "unit_price_cents"
           AND "returned_cents" >= 0 AND "returned_cents" <= "total_cents");
ALTER TABLE "order_tenders" ADD CONSTRAINT "order_tenders_money_check"
    CHECK ("amount_cents" > 0 AND "refunded_cents" >= 0 AND "refunded_cents" <= "amount_cents");
ALTER TABLE "order_refunds" ADD CONSTRAINT "order_refunds_money_check"
    CHECK ("amount_cents" > 0 AND "debited_cents" >= 0 AND "shortfall_cents" >= 0);

-- A ledger entry is applied to its wallet as it is written: the wallet's balance and hold are
-- the sums of its entries by construction, and the wallet CHECK refuses any entry that would
-- overdraw it or hold more than it has.
CREATE FUNCTION "wallet_entry_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE "wallets"
       SET "balance_cents" = "balance_cents" + NEW."balance_delta",
           "held_cents" = "held_cents" + NEW."held_delta",
           "updated_at" = now()
     WHERE "id" = NEW."wallet_id"
     RETURNING "balance_cents", "held_cents" INTO NEW."balance_after", NEW."held_after";
    IF NOT FOUND THEN
        RAISE EXCEPTION 'wallet % does not exist', NEW."wallet_id" USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "wallet_entries_apply" BEFORE INSERT ON "wallet_entries"
    FOR EACH ROW EXECUTE FUNCTION "wallet_entry_apply"();

-- The ledger is append-only: a correction is a new entry, never an edit.
CREATE FUNCTION "wallet_entries_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'wallet_entries is append-only' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER "wallet_entries_no_change" BEFORE UPDATE OR DELETE ON "wallet_entries"
    FOR EACH ROW EXECUTE FUNCTION "wallet_entries_append_only"();

-- A wallet's balance and hold move only through its ledger (the entry trigger above runs at
-- trigger depth 1, so its UPDATE arrives here at depth 2).
CREATE FUNCTION "wallets_balance_via_ledger"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW."balance_cents" <> OLD."balance_cents" OR NEW."held_cents" <> OLD."held_cents")
       AND pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION 'wallet balances change only through wallet_entries' USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "wallets_balance_guard" BEFORE UPDATE ON "wallets"
    FOR EACH ROW EXECUTE FUNCTION "wallets_balance_via_ledger"();
CREATE FUNCTION "wallets_start_empty"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW."balance_cents" <> 0 OR NEW."held_cents" <> 0 THEN
        RAISE EXCEPTION 'a wallet starts empty and is funded through wallet_entries' USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER "wallets_insert_guard" BEFORE INSERT ON "wallets"
    FOR EACH ROW EXECUTE FUNCTION "wallets_start_empty"();

-- At commit, every wallet the transaction wrote to holds exactly what its lots still hold: value
-- cannot appear or vanish between the ledger and the lots that say where it came from and when
-- it expires.
CREATE FUNCTION "wallet_lots_match_balance"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    balance INTEGER;
    remaining BIGINT;
BEGIN
    SELECT "balance_cents" INTO balance FROM "wallets" WHERE "id" = NEW."wallet_id";
    SELECT COALESCE(SUM("remaining_cents"), 0) INTO remaining FROM "wallet_lots" WHERE "wallet_id" = NEW."wallet_id";
    IF balance <> remaining THEN
        RAISE EXCEPTION 'wallet % balance % differs from its lots'' remainders %', NEW."wallet_id", balance, remaining
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER "wallet_entries_lots_match" AFTER INSERT ON "wallet_entries"
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION "wallet_lots_match_balance"();
