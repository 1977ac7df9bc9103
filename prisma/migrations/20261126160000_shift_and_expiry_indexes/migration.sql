-- Closing a POS shift sums its cash from four tables by shift_id, holding the shift's row lock
-- while it does; without these each close read the whole of each table, and its till's cash
-- payments, sales and tenders queued behind it. Only till money has a shift, so the indexes
-- leave the rest out.
CREATE INDEX "payments_shift_id_idx" ON "payments"("shift_id") WHERE "shift_id" IS NOT NULL;
CREATE INDEX "gift_card_sales_shift_id_idx" ON "gift_card_sales"("shift_id") WHERE "shift_id" IS NOT NULL;
CREATE INDEX "order_tenders_shift_id_idx" ON "order_tenders"("shift_id") WHERE "shift_id" IS NOT NULL;
CREATE INDEX "order_refunds_shift_id_idx" ON "order_refunds"("shift_id") WHERE "shift_id" IS NOT NULL;

-- The unpaid-booking sweep (every minute, and again per batch while there is a backlog) looks
-- for held bookings whose hold has expired, oldest first: only held bookings, a few at any time.
CREATE INDEX "bookings_held_expiry_idx" ON "bookings"("hold_expires_at") WHERE "status" = 'held';
