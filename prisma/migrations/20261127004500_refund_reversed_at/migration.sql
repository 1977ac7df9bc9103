-- When Stripe reported failed a refund it had reported succeeded (the card was closed meanwhile):
-- the refund is then `failed` like one that never succeeded, and this tells the two apart. The
-- booking's refund_reversed flag clears once refunds made since give that much back again.
-- Automatic refunds reversed before this version cannot be told apart and stay null.
ALTER TABLE "refunds" ADD COLUMN "reversed_at" TIMESTAMPTZ(3);
