/** The four ids every event about a membership starts with (MembershipRef in the payload map). */
export function membershipRef(membership: {
  id: string;
  planId: string;
  customerId: string;
  holderCustomerId: string;
}) {
  return {
    membership_id: membership.id,
    plan_id: membership.planId,
    customer_id: membership.customerId,
    holder_customer_id: membership.holderCustomerId,
  };
}
