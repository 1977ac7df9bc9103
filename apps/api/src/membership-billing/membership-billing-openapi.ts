import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { keyOrMembershipToken } from '../openapi/openapi-security';
import { CancelMembershipRequest, MembershipCancellation } from './membership-billing-schemas';

export const membershipBillingOpenApi: OpenApiFeature = {
  tag: {
    name: 'Membership billing',
    description:
      'Ending memberships. Recurring billing itself (renewals, failed payments, dunning) follows Stripe notifications and a reconcile job, and is told by membership.* webhook events.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/cancel',
      operationId: 'cancelMembership',
      summary: 'End a membership now or at the end of the period paid for (manager+, or the member at period end)',
      description:
        'Recurring: period_end sets the subscription to cancel at period end (it ends when the provider ends it, with membership.ended); now cancels the subscription and records membership.ended at once. A renewal paid after the request is refunded automatically and never reopens the membership. Fixed-term: now ends it at once (membership.ended, no refund); period_end lets it run to its expiry. The member (X-Membership-Token) may only ask for period_end.',
      access: keyOrMembershipToken('manager'),
      parameters: [uuidPathParam('the membership id')],
      requestBody: { schema: CancelMembershipRequest, example: { at: 'period_end', reason: 'moving away' } },
      responses: { 200: ok('The membership after the request', MembershipCancellation) },
      errors: {
        invalid_body: 'at is not period_end or now, or reason is empty or over 500 characters',
        forbidden: "the key's role is below manager, or a member token asked for at=now",
        membership_not_found: 'no such membership in this tenant (also for an id that is not a uuid)',
        membership_not_active: 'the membership is not live (pending payment, ended, expired or cancelled)',
        payments_not_configured: 'a recurring membership, and Stripe is not configured',
        payment_provider_error: 'Stripe refused the cancellation (detail: provider_code, message)',
        service_unavailable:
          "Stripe did not answer, failed, refused the service's key or rate-limited it; nothing was changed, retry",
      },
    },
  ],
  schemas: [CancelMembershipRequest, MembershipCancellation],
};
