import { ok } from '../openapi/openapi-helpers';
import type { OpenApiFeature } from '../openapi/openapi-operation';
import { anonymous, apiKeyOf } from '../openapi/openapi-security';
import { ImportRequest, ImportResponse, MembershipPurchaseRequest, MembershipPurchaseResponse } from './sale-schemas';

export const membershipSalesOpenApi: OpenApiFeature = {
  tag: {
    name: 'Membership sales',
    description:
      'Buying a membership online (a PaymentIntent for fixed-term plans, a Stripe Subscription for recurring ones) and importing existing members. Till sales are membership lines of POS orders.',
  },
  operations: [
    {
      method: 'post',
      path: '/api/orders/memberships',
      operationId: 'buyMembership',
      summary: 'Buy a membership: an order awaiting payment and the membership, pending until paid',
      description:
        'Makes (or refreshes) the buyer and the holder by email, an order (kind membership) with one membership line, and the membership (pending_payment); records order.created (and customer.created for new customers). Fixed-term plans: confirm the PaymentIntent with client_secret; its success activates the membership (membership.activated) once, however often Stripe notifies. Recurring plans: a Stripe Subscription, incomplete until the buyer pays its first invoice with client_secret (the invoice’s confirmation secret); the billing notifications then activate it. Unpaid by pay_by (ONLINE_ORDER_PAY_MINUTES; 23 h 10 min for a subscription) the order and membership are cancelled (order.cancelled); a payment arriving after that is refunded automatically.',
      access: anonymous,
      requestBody: {
        schema: MembershipPurchaseRequest,
        example: {
          tenant: 'harbour-adventures',
          plan_id: '7d3c2b1a-0f9e-4d8c-b7a6-5e4d3c2b1a0f',
          customer: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
          holder: { email: 'byron@example.com', first_name: 'Byron' },
        },
      },
      responses: { 201: ok('The order and membership, awaiting payment', MembershipPurchaseResponse) },
      errors: {
        invalid_body: 'a bad plan_id, customer or holder, or an unknown field',
        tenant_not_found: 'no published tenant has this slug',
        membership_plan_not_found: 'the plan is not one of this tenant’s',
        plan_not_active: 'the plan is no longer sold',
        membership_exists:
          'the buyer already has a live membership of this recurring plan: detail.status and detail.order_id only (the caller is anonymous). Never a second subscription: the buyer pays the open one with the client_secret of the first answer (a retry with its Idempotency-Key answers it again)',
        payments_not_configured: 'STRIPE_SECRET_KEY is not set: nothing was written',
        payment_provider_error:
          'Stripe refused the PaymentIntent, customer or subscription (detail: provider_code, message); the order and membership are cancelled without an event',
      },
      idempotency: 'Scoped to the route and the client address',
      rateLimitPerMinute: (config) => config.rateLimits.ordersPerMinute,
    },
    {
      method: 'post',
      path: '/api/v1/memberships/imports',
      operationId: 'importMemberships',
      summary: 'Import existing members, idempotent per external_ref (admin)',
      description:
        'Up to 500 rows (a body within BODY_LIMIT_BYTES: at its 64 KiB default about 250 typical rows; send a larger file in parts), each in its own transaction: a new external_ref becomes a membership (source import) with membership.imported (and customer.created for a new customer); a reference imported before is skipped and records nothing. Only fixed-term plans: a recurring row fails with plan_invalid (a subscription is bought online). A row whose expires_at is not after starts_at fails with invalid_body. expires_at defaults to starts_at plus the plan’s term.',
      access: apiKeyOf('admin'),
      idempotency: 'Scoped to the route and the API key',
      requestBody: {
        schema: ImportRequest,
        example: {
          rows: [
            {
              external_ref: 'OLD-000123',
              plan_id: '7d3c2b1a-0f9e-4d8c-b7a6-5e4d3c2b1a0f',
              customer: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
              status: 'active',
              starts_at: '2026-06-01T00:00:00Z',
              expires_at: '2027-06-01T00:00:00Z',
            },
          ],
        },
      },
      responses: { 200: ok('One result per row, in order', ImportResponse) },
      errors: {
        invalid_body: 'no rows or more than 500, or a bad row (status other than active or expired among them)',
        membership_plan_not_found: 'a plan_id is not one of this tenant’s (detail.plan_ids): nothing was imported',
      },
    },
  ],
  schemas: [MembershipPurchaseRequest, MembershipPurchaseResponse, ImportRequest, ImportResponse],
};
