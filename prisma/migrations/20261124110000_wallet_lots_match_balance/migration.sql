-- The commit-time check that a wallet holds exactly what its lots still hold ran only when a
-- ledger entry was written, so a lot written, changed or removed without an entry (a lot out
-- of thin air, a remainder edited by hand) committed unchecked. It now runs for every change
-- of a lot as well.
CREATE OR REPLACE FUNCTION "wallet_lots_match_balance"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    wallet UUID;
    balance INTEGER;
    remaining BIGINT;
BEGIN
    FOREACH wallet IN ARRAY (CASE TG_OP
        WHEN 'INSERT' THEN ARRAY[NEW."wallet_id"]
        WHEN 'DELETE' THEN ARRAY[OLD."wallet_id"]
        ELSE ARRAY[NEW."wallet_id", OLD."wallet_id"] END)
    LOOP
        SELECT "balance_cents" INTO balance FROM "wallets" WHERE "id" = wallet;
        SELECT COALESCE(SUM("remaining_cents"), 0) INTO remaining FROM "wallet_lots" WHERE "wallet_id" = wallet;
        IF balance <> remaining THEN
            RAISE EXCEPTION 'wallet % balance % differs from its lots'' remainders %', wallet, balance, remaining
                USING ERRCODE = 'check_violation';
        END IF;
    END LOOP;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER "wallet_lots_match_balance" AFTER INSERT OR UPDATE OR DELETE ON "wallet_lots"
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION "wallet_lots_match_balance"();

-- Stored value is capped (WALLET_MAX_BALANCE_CENTS in wallet-ledger.ts): the code refuses a
-- credit above it with 409, and the balance never nears the end of its 32-bit column.
ALTER TABLE "wallets" ADD CONSTRAINT "wallets_balance_cap_check" CHECK ("balance_cents" <= 1000000000);
