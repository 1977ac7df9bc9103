-- A provider payment pays for at most one gift card sale, in whichever tenant. Sales were only
-- checked for reuse within their own tenant; if this index cannot be built, two sales already
-- share a payment and need looking into before it is.

-- CreateIndex
CREATE UNIQUE INDEX "gift_card_sales_payment_reference_key" ON "gift_card_sales"("payment_reference");
