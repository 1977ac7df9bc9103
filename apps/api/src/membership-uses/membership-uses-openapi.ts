import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { MemberTokens, MembershipUsageView, UseBenefitRequest, UseGuestPassesRequest } from './membership-use-schemas';

const membershipId = uuidPathParam('the membership id');
const benefitId = {
  name: 'benefitId',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
  description: "one of the membership plan's benefits",
};
const membershipNotFound = 'no such membership in this tenant (also for an id that is not a uuid)';
const notActive =
  'the membership is not active or past due (pending payment, frozen, paused for payment, expired, ended, cancelled; detail.status), or it starts later (detail.starts_at)';
const photoRequired =
  "the membership's plan requires a photo and its holder's photo is not captured yet (detail.membership_id)";
const exhausted = 'the use would go beyond the allowance of the period; detail.kind, remaining, period_key';

export const membershipUsesOpenApi: OpenApiFeature = {
  tag: {
    name: 'Membership uses',
    description:
      "Using a membership: the member's tokens, benefits and guest passes used at the desk. Visits and the member discount on bookings come with POST /api/bookings (membership_token), the discount on retail orders with POST /api/pos/orders.",
  },
  operations: [
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/tokens',
      operationId: 'issueMemberTokens',
      summary: 'Hand the member their member token and self-service link token (staff+)',
      description:
        'Both tokens are signed, not stored: they are in this answer only (never in an event or a log). The member token is what the member shows or types into the booking widget (membership_token); the manage token opens their self-service link (X-Membership-Token). A holder change retires earlier member tokens. No body.',
      access: apiKeyOf('staff'),
      parameters: [membershipId],
      idempotency: 'Scoped to the route and the API key',
      responses: { 201: ok('The tokens, valid until expires_at', MemberTokens) },
      errors: { membership_not_found: membershipNotFound },
    },
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/benefits/{benefitId}/use',
      operationId: 'useMembershipBenefit',
      summary: "Record a use of one of the plan's benefits at the desk (staff+)",
      description:
        "Consumed at once and counted against the benefit's quantity for the current period (unlimited when the plan sets none). Records membership.benefit_used in the same transaction.",
      access: apiKeyOf('staff'),
      parameters: [membershipId, benefitId],
      idempotency: 'Scoped to the route and the API key: a retried use is recorded once',
      requestBody: { schema: UseBenefitRequest, example: { quantity: 1 } },
      responses: { 201: ok('The use, with what is left of the benefit (null: unlimited)', MembershipUsageView) },
      errors: {
        invalid_body: 'quantity missing or not 1 to 100, order_id not a uuid, or another field',
        membership_not_found: membershipNotFound,
        benefit_not_found: "the membership's plan has no such benefit (also for an id that is not a uuid)",
        order_not_found: 'order_id names no order of this tenant',
        membership_not_active: notActive,
        holder_photo_required: photoRequired,
        allowance_exhausted: exhausted,
      },
    },
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/guest-passes/use',
      operationId: 'useMembershipGuestPasses',
      summary: "Admit a member's guests on guest passes at the desk (staff+)",
      description:
        "Consumed at once and counted against the plan's guest passes for the current period, together with passes reserved by online bookings. Records membership.guest_pass_used in the same transaction.",
      access: apiKeyOf('staff'),
      parameters: [membershipId],
      idempotency: 'Scoped to the route and the API key: a retried use is recorded once',
      requestBody: { schema: UseGuestPassesRequest, example: { guest_count: 2 } },
      responses: { 201: ok('The use, with the guest passes left in the period', MembershipUsageView) },
      errors: {
        invalid_body: 'guest_count missing or not 1 to 50, booking_id not a uuid, or another field',
        membership_not_found: membershipNotFound,
        booking_not_found: 'booking_id names no booking of this tenant',
        membership_not_active: notActive,
        holder_photo_required: photoRequired,
        allowance_exhausted: exhausted,
      },
    },
  ],
  schemas: [MemberTokens, UseBenefitRequest, UseGuestPassesRequest, MembershipUsageView],
};
