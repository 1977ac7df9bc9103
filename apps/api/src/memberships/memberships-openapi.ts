import { MEMBERSHIP_STATUSES } from '@booking/domain';
import { ok, pageParams, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import { MEMBERSHIP_VIEW_SCHEMAS, MembershipList, MembershipView } from './membership-schemas';

const membershipNotFound = 'no such membership in this tenant (also for an id that is not a uuid)';

export const membershipsOpenApi: OpenApiFeature = {
  tag: {
    name: 'Memberships',
    description:
      'Fixed-term passes and recurring subscriptions: what each member holds, what they used, their freezes, plan and price changes, and the invoices Stripe reported.',
  },
  operations: [
    {
      method: 'get',
      path: '/api/v1/memberships',
      operationId: 'listMemberships',
      summary: "The tenant's memberships, oldest first (staff+)",
      access: apiKeyOf('staff'),
      parameters: [
        ...pageParams('next_starting_after of the previous page'),
        { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: [...MEMBERSHIP_STATUSES] } },
        { name: 'plan_id', in: 'query', required: false, schema: { type: 'string', format: 'uuid' } },
        {
          name: 'customer_id',
          in: 'query',
          required: false,
          schema: { type: 'string', format: 'uuid' },
          description: 'memberships the customer owns or holds',
        },
      ],
      strictQuery: true,
      responses: { 200: ok('A page of memberships', MembershipList) },
      errors: {
        invalid_query: 'a bad limit, starting_after, status, plan_id or customer_id, or an unknown parameter',
        membership_not_found: 'starting_after names no membership of this tenant',
      },
    },
    {
      method: 'get',
      path: '/api/v1/memberships/{id}',
      operationId: 'getMembership',
      summary: 'A membership with its uses, freezes, changes and invoices (staff+)',
      access: apiKeyOf('staff'),
      parameters: [uuidPathParam('the membership id')],
      responses: { 200: ok('The membership', MembershipView) },
      errors: { membership_not_found: membershipNotFound },
    },
  ],
  schemas: MEMBERSHIP_VIEW_SCHEMAS,
};
