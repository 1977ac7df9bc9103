-- Customers are one per tenant and email, compared trimmed and lower-cased; every path stores
-- them so, but a holder change by contact stored the email as sent until this version. Such a
-- customer is no longer found by its email (lookups use the lower-cased form), so naming it
-- again would make a second customer. Each one is lower-cased, unless the tenant already has a
-- customer with that form (two records of one person, left for an operator to reconcile: no
-- merge is made here); of several that lower-case alike, the oldest.
UPDATE "customers" c SET "email" = lower(btrim(c."email"))
FROM (
  SELECT DISTINCT ON ("tenant_id", lower(btrim("email"))) "id"
  FROM "customers"
  WHERE "email" <> lower(btrim("email"))
  ORDER BY "tenant_id", lower(btrim("email")), "created_at", "id"
) pick
WHERE c."id" = pick."id"
  AND NOT EXISTS (
    SELECT 1 FROM "customers" d WHERE d."tenant_id" = c."tenant_id" AND d."email" = lower(btrim(c."email"))
  );
