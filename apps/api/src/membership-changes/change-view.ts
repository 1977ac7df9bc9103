import type { MembershipChange } from '@booking/db';
import type { Static } from '@sinclair/typebox';
import type { MembershipChangeView } from '../memberships/membership-schemas';

/** A change row as the API shows it (the `MembershipChange` schema). */
export function changeView(change: MembershipChange): Static<typeof MembershipChangeView> {
  return {
    change_id: change.id,
    kind: change.kind,
    status: change.status,
    when: change.timing,
    from_plan_id: change.fromPlanId,
    to_plan_id: change.toPlanId,
    from_price_cents: change.fromPriceCents,
    to_price_cents: change.toPriceCents,
    effective_at: change.effectiveAt.toISOString(),
    requested_by: change.requestedBy,
    invoice_id: change.invoiceId,
    created_at: change.createdAt.toISOString(),
    resolved_at: change.resolvedAt?.toISOString() ?? null,
  };
}
