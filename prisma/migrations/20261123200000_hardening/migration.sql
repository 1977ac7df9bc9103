-- AlterTable
ALTER TABLE "bookings" ADD COLUMN     "idempotency_ref" TEXT;

-- AlterTable
ALTER TABLE "events" ADD COLUMN     "sealed_data" TEXT;

-- Reissued gift card codes were kept readable in the outbox. Events whose deliveries have all
-- ended no longer need theirs; the few still being delivered keep it until they are sent.
UPDATE "events" e SET "data" = e."data" - 'new_gift_card_code'
WHERE e."name" = 'booking.reissued'
  AND NOT EXISTS (
    SELECT 1 FROM "webhook_deliveries" d
    WHERE d."event_id" = e."id" AND d."status" IN ('pending', 'waiting')
  )
  AND e."relayed_at" IS NOT NULL;
