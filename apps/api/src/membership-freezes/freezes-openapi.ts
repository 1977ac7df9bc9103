import { MembershipFreezeView } from '../memberships/membership-schemas';
import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { keyOrMembershipToken } from '../openapi/openapi-security';
import { BookFreezeRequest, CancelFreezeRequest } from './freeze-schemas';

const membershipId = uuidPathParam('the membership id');
const freezeId = {
  name: 'freezeId',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
  description: 'the freeze id',
};
const membershipNotFound = 'no such membership in this tenant (also for an id that is not a uuid)';

export const freezesOpenApi: OpenApiFeature = {
  tag: {
    name: 'Membership freezes',
    description:
      'A membership paused for a span of days, within the rules of its plan: booked ahead, started and ended by the lifecycle worker (the expiry moves out by the days frozen), or cancelled.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/freezes',
      operationId: 'bookMembershipFreeze',
      summary: 'Book a freeze of an active membership (manager+, or the member)',
      description:
        "Days are calendar days (UTC), both included. The plan's rules apply: freezes allowed, min and max days, freezes per calendar year, notice days; a recurring membership's freeze starts on its next renewal date (the day of expires_at), when its subscription is paused with nothing left to credit, and it carries the plan's freeze fee, billed when it starts. Records membership.freeze_booked; the lifecycle worker starts it on its first day (membership.frozen) and ends it after its last (membership.unfrozen).",
      access: keyOrMembershipToken('manager'),
      parameters: [membershipId],
      idempotency: 'Scoped to the route and the API key (or the membership, for the member)',
      requestBody: {
        schema: BookFreezeRequest,
        example: { starts_on: '2026-12-01', ends_on: '2026-12-21', reason: 'travelling' },
      },
      responses: { 201: ok('The booked freeze', MembershipFreezeView) },
      errors: {
        invalid_body:
          'a day that is not YYYY-MM-DD or not a calendar day, ends_on before starts_on, or reason too long',
        membership_not_found: membershipNotFound,
        membership_not_active: 'the membership is not active (detail.status)',
        change_pending: 'a plan or price change of the membership is pending (detail.change_id)',
        freeze_overlap: 'the days overlap another freeze of the membership (detail.freeze_id)',
        freeze_rules_violated:
          "against the plan's rules; detail.rule names the rule: freeze_allowed, min_days, max_days, notice (detail.earliest_starts_on), freezes_per_year, renewal_date (recurring: detail.renewal_date) or within_term (fixed-term: starts after the term ends)",
      },
    },
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/freezes/{freezeId}/cancel',
      operationId: 'cancelMembershipFreeze',
      summary: 'Cancel a booked freeze, or end an active one early (manager+, or the member)',
      description:
        'A booked freeze is cancelled (membership.freeze_cancelled, was booked). An active one ends today: the membership is active again with its expiry moved out by the days frozen so far (membership.unfrozen; a recurring subscription resumes with a new billing period from now), and the freeze is recorded cancelled (membership.freeze_cancelled, was active).',
      access: keyOrMembershipToken('manager'),
      parameters: [membershipId, freezeId],
      requestBody: {
        schema: CancelFreezeRequest,
        example: { reason: 'back early' },
        required: false,
      },
      responses: { 200: ok('The cancelled freeze', MembershipFreezeView) },
      errors: {
        invalid_body: 'reason empty or over 500 characters, or an unknown field',
        membership_not_found: membershipNotFound,
        freeze_not_found: 'no such freeze of this membership (also for an id that is not a uuid)',
        freeze_not_cancellable: 'the freeze is completed or cancelled already (detail.status)',
        payments_not_configured:
          'a recurring membership needs Stripe to resume its subscription, and none is configured',
        payment_provider_error: 'Stripe refused to resume the subscription (detail.provider_code)',
      },
    },
  ],
  schemas: [BookFreezeRequest, CancelFreezeRequest, MembershipFreezeView],
};
