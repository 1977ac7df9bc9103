import { ok, pageParams, uuidPathParam } from '../openapi/openapi-helpers';
import type { OpenApiFeature, OperationSpec } from '../openapi/openapi-operation';
import { apiKeyOf } from '../openapi/openapi-security';
import {
  CreateEndpointRequest,
  RecoverRequest,
  RecoverResponse,
  RedeliverResponse,
  ResumedWebhookEndpoint,
  TestDeliveryRequest,
  TestDeliveryResponse,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
} from './webhook-schemas';

const read = apiKeyOf('admin');
const write = apiKeyOf('admin', 'webhooks:write');
const endpointId = uuidPathParam('the endpoint id');
const endpointNotFound = {
  webhook_endpoint_not_found: 'no such endpoint in this tenant (also for an id that is not a uuid)',
};
const disabled = {
  webhook_endpoint_disabled: 'the endpoint is disabled: resume it first (its waiting deliveries go then)',
};

/** An operation on one endpoint, `/api/webhooks/endpoints/{id}<suffix>`. */
const onEndpoint = (suffix: string, spec: Omit<OperationSpec, 'path' | 'parameters'>): OperationSpec => ({
  ...spec,
  path: `/api/webhooks/endpoints/{id}${suffix}`,
  parameters: [endpointId],
  errors: { ...endpointNotFound, ...spec.errors },
});

export const webhookEndpointsOpenApi: OpenApiFeature = {
  tag: {
    name: 'Webhook endpoints',
    description:
      "A tenant's webhook subscriptions and their deliveries (admin keys; changes need the webhooks:write scope). What is sent to them is under webhooks.",
  },
  operations: [
    {
      method: 'post',
      path: '/api/webhooks/endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Subscribe an HTTPS URL to events (admin, webhooks:write)',
      description:
        'Omitted or empty `events` subscribes to every operator-subscribable event. The answer carries `signing_secret`, shown this once.',
      access: write,
      requestBody: {
        schema: CreateEndpointRequest,
        example: {
          url: 'https://hooks.example.com/booking-service',
          events: ['booking.confirmed', 'booking.cancelled'],
        },
      },
      responses: { 201: ok('Endpoint created, with its signing_secret', WebhookEndpoint) },
      errors: {
        invalid_webhook_url:
          'not an https URL a delivery may go to: credentials in it, an IP address, a single-label or internal name, a port below 1024 other than 443, or a host that resolves to a private address (detail says which)',
      },
    },
    {
      method: 'get',
      path: '/api/webhooks/endpoints',
      operationId: 'listWebhookEndpoints',
      summary: "The tenant's endpoints (admin)",
      access: read,
      responses: { 200: ok('The endpoints, without secrets', WebhookEndpointList) },
      errors: {},
    },
    onEndpoint('', {
      method: 'get',
      operationId: 'getWebhookEndpoint',
      summary: 'One endpoint, without its secret (admin)',
      access: read,
      responses: { 200: ok('The endpoint', WebhookEndpoint) },
      errors: {},
    }),
    onEndpoint('', {
      method: 'delete',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Remove a subscription; nothing more is sent (admin, webhooks:write)',
      access: write,
      responses: { 204: { description: 'Removed' } },
      errors: {},
    }),
    onEndpoint('/rotate-secret', {
      method: 'post',
      operationId: 'rotateWebhookEndpointSecret',
      summary: 'A new signing secret, shown once (admin, webhooks:write)',
      description: 'The old secret keeps signing X-Service-Signature-Previous for 7 days.',
      access: write,
      responses: { 200: ok('The endpoint with its new signing_secret', WebhookEndpoint) },
      errors: {},
    }),
    onEndpoint('/resume', {
      method: 'post',
      operationId: 'resumeWebhookEndpoint',
      summary: 'Re-enable a disabled endpoint and send the deliveries that waited (admin, webhooks:write)',
      access: write,
      responses: { 200: ok('The endpoint and how many deliveries go now', ResumedWebhookEndpoint) },
      errors: {},
    }),
    onEndpoint('/test', {
      method: 'post',
      operationId: 'sendWebhookTestDelivery',
      summary: 'Send a test delivery (`_test: true`, sample data) (admin, webhooks:write)',
      access: write,
      requestBody: { schema: TestDeliveryRequest, required: false, example: { event: 'booking.confirmed' } },
      responses: { 202: ok('Queued', TestDeliveryResponse) },
      errors: {
        invalid_body: 'the body is not JSON, or event is not an operator-subscribable event, or has unknown fields',
      },
    }),
    onEndpoint('/recover', {
      method: 'post',
      operationId: 'recoverWebhookDeliveries',
      summary: 'Send again every abandoned delivery of the endpoint created since a time (admin, webhooks:write)',
      access: write,
      requestBody: { schema: RecoverRequest, example: { since: '2026-11-20T00:00:00Z' } },
      responses: { 202: ok('Queued again', RecoverResponse) },
      errors: {
        invalid_body: 'the body is not JSON, or since is missing or not an RFC 3339 date-time, or has unknown fields',
        ...disabled,
      },
    }),
    {
      method: 'get',
      path: '/api/webhooks/endpoints/{id}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'Deliveries, newest first, each with its attempts (admin)',
      description: 'Each attempt with its time, status code, latency, error and the start of the response body.',
      access: read,
      parameters: [endpointId, ...pageParams('next_starting_after of the previous page')],
      strictQuery: true,
      responses: { 200: ok('A page of deliveries', WebhookDeliveryList) },
      errors: {
        ...endpointNotFound,
        invalid_query: 'limit is not 1 to 100, starting_after is not a uuid, or an unknown parameter was sent',
        webhook_delivery_not_found: 'starting_after names no delivery of this endpoint',
      },
    },
    {
      method: 'post',
      path: '/api/webhooks/deliveries/{id}/redeliver',
      operationId: 'redeliverWebhookDelivery',
      summary: 'Send a delivery again: same delivery id, fresh schedule (admin, webhooks:write)',
      access: write,
      parameters: [uuidPathParam('the delivery id')],
      responses: { 202: ok('Queued again', RedeliverResponse) },
      errors: {
        webhook_delivery_not_found: 'no such delivery in this tenant, or its endpoint was deleted',
        ...disabled,
      },
    },
  ],
  schemas: [
    CreateEndpointRequest,
    WebhookEndpoint,
    WebhookEndpointList,
    ResumedWebhookEndpoint,
    TestDeliveryRequest,
    TestDeliveryResponse,
    RecoverRequest,
    RecoverResponse,
    WebhookDelivery,
    WebhookDeliveryList,
    RedeliverResponse,
  ],
};
