import { ok, pageParams, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous, apiKeyOf } from '../openapi/openapi-security';
import { CreatePlanRequest, PlanList, PlanView, UpdatePlanRequest, WidgetPlanList } from './plan-schemas';

const planId = uuidPathParam('the plan id');
const planNotFound = 'no such plan in this tenant (also for an id that is not a uuid)';
const planInvalid =
  'the fields do not fit together: a fixed-term plan needs term_days or term_months (one) and no interval; a recurring plan an interval and no term; freeze_max_days below freeze_min_days; a freeze fee on a fixed-term plan; benefit names repeated (detail.problems)';

export const membershipPlansOpenApi: OpenApiFeature = {
  tag: {
    name: 'Membership plans',
    description:
      'What a venue sells as memberships: fixed-term passes and recurring subscriptions on a Stripe Price, with visit and guest pass allowances, named benefits, a member discount and freeze rules.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/v1/membership-plans',
      operationId: 'createMembershipPlan',
      summary: 'Create a membership plan (admin)',
      description:
        'A recurring plan gets a Stripe Product and a recurring Price, made with idempotency keys derived from the plan id. The plan is written first: when Stripe fails (502/503) it is kept without them, and the same request retried with its Idempotency-Key completes that plan rather than making another (a purchase of it completes it too). Fixed-term plans need nothing from Stripe. No webhook event.',
      access: apiKeyOf('admin'),
      idempotency: 'Scoped to the route and the API key; also completes a plan Stripe failed to set up',
      requestBody: {
        schema: CreatePlanRequest,
        example: {
          name: 'Monthly unlimited',
          billing: 'recurring',
          price_cents: 4900,
          currency: 'USD',
          interval: 'month',
          visits_per_period: null,
          guest_passes_per_period: 2,
          member_discount_percent: 10,
          freeze_allowed: true,
          freeze_min_days: 7,
          freeze_max_days: 60,
          freeze_fee_cents: 500,
          benefits: [{ name: 'Coffee', quantity_per_period: 4 }],
        },
      },
      responses: { 201: ok('The plan', PlanView) },
      errors: {
        invalid_body: 'a field missing, of the wrong type or out of range, or an unknown field',
        plan_invalid: planInvalid,
        payments_not_configured: 'a recurring plan without STRIPE_SECRET_KEY: the plan is kept without its Price',
        payment_provider_error:
          'Stripe refused the Product or Price (detail: provider_code, message); the plan is kept without it',
      },
    },
    {
      method: 'get',
      path: '/api/v1/membership-plans',
      operationId: 'listMembershipPlans',
      summary: "The tenant's membership plans, oldest first (staff+)",
      access: apiKeyOf('staff'),
      parameters: [
        ...pageParams('next_starting_after of the previous page'),
        { name: 'active', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] } },
      ],
      strictQuery: true,
      responses: { 200: ok('A page of plans', PlanList) },
      errors: {
        invalid_query: 'a bad limit, starting_after or active, or an unknown parameter',
        membership_plan_not_found: 'starting_after names no plan of this tenant',
      },
    },
    {
      method: 'get',
      path: '/api/v1/membership-plans/{id}',
      operationId: 'getMembershipPlan',
      summary: 'A membership plan with its benefits (staff+)',
      access: apiKeyOf('staff'),
      parameters: [planId],
      responses: { 200: ok('The plan', PlanView) },
      errors: { membership_plan_not_found: planNotFound },
    },
    {
      method: 'patch',
      path: '/api/v1/membership-plans/{id}',
      operationId: 'updateMembershipPlan',
      summary: 'Change what a plan offers (admin)',
      description:
        'Name, description, active, allowances, discount, freeze rules, transferable, requires_photo and benefits. Billing, price and interval are fixed here (a price change moves live subscriptions and is its own route). benefits is the whole list, matched by name: listed names are kept (with their uses) or added, missing ones removed unless already used. No webhook event.',
      access: apiKeyOf('admin'),
      parameters: [planId],
      requestBody: { schema: UpdatePlanRequest, example: { active: false } },
      responses: { 200: ok('The plan after the change', PlanView) },
      errors: {
        invalid_body: 'no field, an unknown field (price_cents, billing and interval among them), or a bad value',
        membership_plan_not_found: planNotFound,
        plan_invalid: `${planInvalid}; or a benefit that was used would be removed; or allowance_period would change while live memberships count their uses by it`,
      },
    },
    {
      method: 'get',
      path: '/api/widget/membership-plans',
      operationId: 'listWidgetMembershipPlans',
      summary: 'The membership plans a published tenant sells',
      description: 'Active plans, cheapest first, without Stripe ids. Other query parameters are ignored.',
      access: anonymous,
      parameters: [
        {
          name: 'tenant',
          in: 'query',
          required: true,
          schema: { type: 'string', minLength: 1, maxLength: 100 },
          description: 'tenant slug',
        },
      ],
      responses: { 200: ok('The active plans', WidgetPlanList) },
      errors: {
        invalid_query: 'tenant is missing, empty or longer than 100 characters',
        tenant_not_found: 'no published tenant has this slug',
      },
    },
  ],
  schemas: [CreatePlanRequest, UpdatePlanRequest, PlanView, PlanList, WidgetPlanList],
};
