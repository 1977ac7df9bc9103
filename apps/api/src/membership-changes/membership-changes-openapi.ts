import { ok, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf, keyOrMembershipToken } from '../openapi/openapi-security';
import { MembershipChangeView } from '../memberships/membership-schemas';
import { PlanChangeRequest, PriceChangeRequest, PriceChangeResult } from './change-schemas';

const membershipNotFound = 'no such membership in this tenant (also for an id that is not a uuid)';
const provider = {
  payments_not_configured: 'STRIPE_SECRET_KEY is not set: nothing was changed',
  payment_provider_error: "Stripe refused the subscription change (detail: Stripe's code and message)",
};

export const membershipChangesOpenApi: OpenApiFeature = {
  tag: {
    name: 'Membership changes',
    description:
      'A recurring membership moving to another plan (at its next renewal, or an upgrade at once), and an operator changing the price of a recurring plan for its members.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/v1/memberships/{id}/plan-change',
      operationId: 'requestPlanChange',
      summary: 'Move a recurring membership to another plan (manager+, or the member)',
      description:
        'period_end: the subscription bills the new plan from its next renewal, and the change applies when that invoice is paid. now (upgrades only): the difference for the rest of the period is invoiced at once and the change applies when that invoice is paid; unpaid, it lapses (membership.plan_change_cancelled, payment_failed). Records membership.plan_change_requested once Stripe took the change. The new plan must be recurring, active, with the same currency and interval; fixed-term memberships do not change plan (sell the other plan instead).',
      access: keyOrMembershipToken('manager'),
      parameters: [uuidPathParam('the membership id')],
      idempotency: 'Scoped to the route and the API key (or the membership, for the member token)',
      requestBody: {
        schema: PlanChangeRequest,
        example: { to_plan_id: '5b1f0c8e-2a3d-4e5f-8a9b-0c1d2e3f4a5b', when: 'period_end' },
      },
      responses: { 201: ok('The pending change', MembershipChangeView) },
      errors: {
        invalid_body: 'to_plan_id not a uuid, when not period_end or now, or another field',
        membership_not_found: membershipNotFound,
        membership_plan_not_found: 'to_plan_id names no plan of this tenant',
        plan_not_active: 'the new plan is not sold any more',
        plan_invalid:
          'the new plan is not recurring, or has another currency or billing interval (an interval change is an end and a new purchase)',
        membership_not_active: 'the membership is not active or past due (detail.status)',
        change_not_allowed:
          'a fixed-term membership (buy the other plan instead), the plan it is on, a membership ending at its period end, a freeze booked or running, or now for a plan that is not dearer',
        change_pending: 'the membership has a plan or price change pending already (detail: change_id, kind)',
        ...provider,
      },
    },
    {
      method: 'delete',
      path: '/api/v1/memberships/{id}/plan-change',
      operationId: 'withdrawPlanChange',
      summary: "Withdraw a membership's pending plan change (manager+, or the member)",
      description:
        'The subscription goes back to the old price; records membership.plan_change_cancelled (withdrawn). An upgrade made now cannot be withdrawn: it waits on its invoice.',
      access: keyOrMembershipToken('manager'),
      parameters: [uuidPathParam('the membership id')],
      responses: { 200: ok('The cancelled change', MembershipChangeView) },
      errors: {
        membership_not_found: membershipNotFound,
        change_not_found: 'the membership has no pending plan change',
        change_not_allowed: 'the pending change is an upgrade made now, waiting on its invoice',
        change_pending: 'the change was asked for moments ago and is still being made; retry in a minute',
        ...provider,
      },
    },
    {
      method: 'post',
      path: '/api/v1/membership-plans/{id}/price-changes',
      operationId: 'schedulePlanPriceChange',
      summary: "Change a recurring plan's price from a day on (admin)",
      description:
        "A new Stripe Price is made on the plan's product. New buyers pay it from effective_on; each live recurring member (active, past due, frozen or paused for payment) is moved to it at their first renewal on or after effective_on, announced now with membership.price_change_scheduled. Members with another change pending are listed as skipped: they keep their price, unless that change ends before the new price takes effect without moving them off the plan, when they are moved too. Members who join the plan on the old price after this request (a purchase paid, a plan change into it applied), before effective_on or after it, are moved the same way, at their first renewal on or after effective_on and on a later day (UTC) than the one they joined on. A pending price change, like any pending change, refuses freezes and plan changes with 409 change_pending until its renewal applies it. The same request again (same price and day) carries on with the members not yet scheduled and lists those already scheduled.",
      access: apiKeyOf('admin'),
      parameters: [uuidPathParam('the plan id')],
      idempotency: 'Scoped to the route and the API key',
      requestBody: { schema: PriceChangeRequest, example: { price_cents: 3900, effective_on: '2027-01-01' } },
      responses: { 201: ok('The new price and the memberships it was scheduled for', PriceChangeResult) },
      errors: {
        invalid_body: 'price_cents not a positive integer, or effective_on not a day, tomorrow (UTC) or later',
        membership_plan_not_found: 'no such plan in this tenant (also for an id that is not a uuid)',
        plan_invalid: 'the plan is not recurring, or has this price already',
        change_pending: 'the plan has another price change scheduled (a different price or day)',
        ...provider,
      },
    },
  ],
  schemas: [PlanChangeRequest, PriceChangeRequest, PriceChangeResult],
};
