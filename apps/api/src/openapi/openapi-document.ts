import { Type, type TSchema } from '@sinclair/typebox';
import { apiKey, error, json, idempotencyKeyParam } from './openapi-helpers';
import { BookingRequest, BookingResponse } from '../bookings/booking-schemas';
import { CheckInByTokenRequest } from '../bookings/operator-booking-routes';
import { HoldRequest, HoldResponse } from '../holds/hold-schemas';
import { Experience, Slot, WidgetExperienceResponse } from '../widget/widget-schemas';
import { amendmentsOpenApi } from '../amendments/amendments-openapi';
import { customersOpenApi } from '../customers/customers-openapi';
import { giftCardsOpenApi } from '../gift-cards/gift-cards-openapi';
import { posOpenApi } from '../pos/pos-openapi';
import { refundsOpenApi } from '../refunds/refunds-openapi';
import { waiversOpenApi } from '../waivers/waivers-openapi';
import {
  CreateEndpointRequest,
  RecoverRequest,
  TestDeliveryRequest,
  WebhookEndpoint,
} from '../webhooks/webhook-schemas';

const PaymentIntentResponse = Type.Object(
  {
    client_secret: Type.String(),
    publishable_key: Type.String(),
    amount_cents: Type.Integer({ minimum: 0, description: 'booking total less any gift card applied' }),
    currency: Type.String({ minLength: 3, maxLength: 3 }),
  },
  { $id: 'PaymentIntentResponse' },
);

const ErrorBody = Type.Object(
  { error: Type.String({ description: 'machine code' }), detail: Type.Optional(Type.Unknown()) },
  { $id: 'Error' },
);

const idempotencyKey = idempotencyKeyParam('Scoped to the route and the client address');

const rateLimited = error('Rate limited (per IP); see the RateLimit and RateLimit-Policy headers');

const bookingId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const operatorErrors = {
  401: error('unauthorized: missing, malformed, unknown or revoked API key'),
  403: error("forbidden: the key's role is below the one this action needs"),
  404: error('booking_not_found (in this tenant)'),
};
const endpointId = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const webhookErrors = {
  401: error('unauthorized'),
  403: error('forbidden: not an admin key, or no webhooks:write scope for changes'),
  404: error('webhook_endpoint_not_found / webhook_delivery_not_found (in this tenant)'),
};
const anyJson = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object' } } },
});

/** Turns the TypeBox `$ref: "Experience"` style into OpenAPI component references. */
function componentSchema(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) =>
    key === '$ref' && typeof value === 'string' && !value.startsWith('#') ? `#/components/schemas/${value}` : value,
  );
}

/** Features that describe their own routes next to them. */
const FEATURE_DOCS: { paths: Record<string, unknown>; schemas: TSchema[] }[] = [
  amendmentsOpenApi,
  customersOpenApi,
  giftCardsOpenApi,
  posOpenApi,
  refundsOpenApi,
  waiversOpenApi,
];

/** The OpenAPI 3.1 description of the API, built from the same schemas that validate requests. */
export function buildOpenApiDocument(serverUrl: string) {
  const schemas = [
    ErrorBody,
    Experience,
    Slot,
    WidgetExperienceResponse,
    HoldRequest,
    HoldResponse,
    BookingRequest,
    BookingResponse,
    PaymentIntentResponse,
    CheckInByTokenRequest,
    CreateEndpointRequest,
    WebhookEndpoint,
    TestDeliveryRequest,
    RecoverRequest,
    ...FEATURE_DOCS.flatMap((doc) => doc.schemas),
  ];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Booking Service',
      version: '1.0.0',
      description:
        'Booking API for attraction venues: discovery, holds, bookings, payments, operator actions and webhook subscriptions.',
    },
    servers: [{ url: serverUrl }],
    paths: {
      '/api/widget/experience': {
        get: {
          summary: 'An experience and its bookable slots for the next 14 days',
          parameters: [
            { name: 'tenant', in: 'query', required: true, schema: { type: 'string' }, description: 'tenant slug' },
            {
              name: 'experience',
              in: 'query',
              required: true,
              schema: { type: 'string' },
              description: 'experience slug',
            },
          ],
          responses: {
            200: {
              description: 'The experience and slots with seats_remaining >= min_party_size',
              ...json(WidgetExperienceResponse),
            },
            400: error('invalid_query'),
            404: error('experience_not_found: tenant or experience unknown or unpublished'),
          },
        },
      },
      '/api/bookings/hold': {
        post: {
          summary: 'Hold seats in a slot for 10 minutes',
          parameters: [idempotencyKey],
          requestBody: { required: true, ...json(HoldRequest) },
          responses: {
            200: { description: 'Seats held', ...json(HoldResponse) },
            400: error('invalid_body, invalid_guest_count (outside the party size), experience_slot_mismatch'),
            404: error('slot_not_found'),
            409: error('insufficient_capacity, slot_unavailable (already started), idempotency_request_in_progress'),
            422: error('idempotency_key_reused'),
            429: rateLimited,
          },
        },
      },
      '/api/bookings': {
        post: {
          summary: 'Turn a hold into a booking with status held',
          parameters: [idempotencyKey],
          requestBody: { required: true, ...json(BookingRequest) },
          responses: {
            201: { description: 'Booking created', ...json(BookingResponse) },
            400: error('invalid_body, invalid_guest_count, experience_slot_mismatch, addon_invalid, addon_not_found'),
            404: error('hold_not_found (unknown or already used)'),
            409: error('capacity_exceeded, idempotency_request_in_progress'),
            410: error('hold_expired'),
            422: error('idempotency_key_reused'),
            429: rateLimited,
          },
        },
      },
      '/api/embed/bookings/{id}/payment-intent': {
        post: {
          summary: 'Create (or, on retry, return) the PaymentIntent paying a held booking',
          parameters: [
            bookingId,
            {
              name: 'X-Booking-Token',
              in: 'header',
              required: true,
              schema: { type: 'string' },
              description: 'booking_token from POST /api/bookings',
            },
            idempotencyKey,
          ],
          responses: {
            200: {
              description: "Client secret for the payment provider's browser library",
              ...json(PaymentIntentResponse),
            },
            401: error('invalid_token, token_expired'),
            404: error('booking_not_found'),
            409: error('booking_not_payable: already confirmed, cancelled or refunded'),
            503: error('payments_not_configured'),
          },
        },
      },
      '/api/payments/stripe/webhook': {
        post: {
          summary: 'Stripe notifications (payment_intent.succeeded confirms the booking once)',
          parameters: [{ name: 'Stripe-Signature', in: 'header', required: true, schema: { type: 'string' } }],
          responses: {
            200: anyJson('Handled or ignored'),
            400: error('invalid_signature'),
            503: error('payments_not_configured'),
          },
        },
      },
      '/api/bookings/{id}': {
        get: {
          summary: 'A booking as operators see it (staff+)',
          security: apiKey,
          parameters: [bookingId],
          responses: { 200: anyJson('The booking, its payments and its check_in_token'), ...operatorErrors },
        },
      },
      '/api/bookings/{id}/qr.svg': {
        get: {
          summary: 'The check-in token as a QR code (staff+)',
          security: apiKey,
          parameters: [bookingId],
          responses: { 200: { description: 'SVG image', content: { 'image/svg+xml': {} } }, ...operatorErrors },
        },
      },
      '/api/bookings/{id}/cancel': {
        post: {
          summary: 'Cancel a held or confirmed booking; no refund (manager+)',
          security: apiKey,
          parameters: [bookingId],
          responses: {
            200: anyJson('{booking_id, status: "cancelled"}'),
            ...operatorErrors,
            409: error('booking_not_cancellable'),
          },
        },
      },
      '/api/bookings/{id}/check-in': {
        post: {
          summary: 'Check a confirmed booking in; idempotent (staff+)',
          security: apiKey,
          parameters: [bookingId],
          responses: {
            200: anyJson('{booking_id, checked_in_at, already_checked_in}'),
            ...operatorErrors,
            409: error('booking_not_checkable'),
          },
        },
      },
      '/api/bookings/check-in-by-token': {
        post: {
          summary: 'Check in by a scanned QR token of this tenant; idempotent (staff+)',
          security: apiKey,
          requestBody: { required: true, ...json(CheckInByTokenRequest) },
          responses: {
            200: anyJson('{booking_id, checked_in_at, already_checked_in}'),
            ...operatorErrors,
            401: error('unauthorized (API key) or invalid_token (bad signature or expired)'),
            409: error('booking_not_checkable'),
          },
        },
      },
      '/api/webhooks/endpoints': {
        post: {
          summary: 'Subscribe an HTTPS URL to events (admin key with webhooks:write)',
          description:
            'Omitted or empty `events` subscribes to every operator-subscribable event. The answer carries `signing_secret`, shown this once.',
          security: apiKey,
          requestBody: { required: true, ...json(CreateEndpointRequest) },
          responses: {
            201: { description: 'Endpoint created, with its signing_secret', ...json(WebhookEndpoint) },
            400: error('invalid_body, invalid_webhook_url'),
            401: error('unauthorized'),
            403: error('forbidden: not an admin key, or no webhooks:write scope'),
          },
        },
        get: {
          summary: "The tenant's endpoints (admin)",
          security: apiKey,
          responses: { 200: anyJson('{data: WebhookEndpoint[]} without secrets'), ...webhookErrors },
        },
      },
      '/api/webhooks/endpoints/{id}': {
        get: {
          summary: 'One endpoint, without its secret (admin)',
          security: apiKey,
          parameters: [endpointId],
          responses: { 200: { description: 'The endpoint', ...json(WebhookEndpoint) }, ...webhookErrors },
        },
        delete: {
          summary: 'Remove a subscription; nothing more is sent (webhooks:write)',
          security: apiKey,
          parameters: [endpointId],
          responses: { 204: { description: 'Removed' }, ...webhookErrors },
        },
      },
      '/api/webhooks/endpoints/{id}/rotate-secret': {
        post: {
          summary: 'New signing secret, shown once; the old one signs X-Service-Signature-Previous for 7 days',
          security: apiKey,
          parameters: [endpointId],
          responses: {
            200: { description: 'The endpoint with its new signing_secret', ...json(WebhookEndpoint) },
            ...webhookErrors,
          },
        },
      },
      '/api/webhooks/endpoints/{id}/resume': {
        post: {
          summary: 'Re-enable an auto-disabled endpoint and send the deliveries that waited',
          security: apiKey,
          parameters: [endpointId],
          responses: { 200: anyJson('The endpoint and resumed_deliveries'), ...webhookErrors },
        },
      },
      '/api/webhooks/endpoints/{id}/test': {
        post: {
          summary: 'Send a test delivery (`_test: true`, sample data)',
          security: apiKey,
          parameters: [endpointId],
          requestBody: { required: false, ...json(TestDeliveryRequest) },
          responses: { 202: anyJson('{delivery_id}'), ...webhookErrors },
        },
      },
      '/api/webhooks/endpoints/{id}/recover': {
        post: {
          summary: 'Resend every abandoned delivery of the endpoint created since a time',
          security: apiKey,
          parameters: [endpointId],
          requestBody: { required: true, ...json(RecoverRequest) },
          responses: { 202: anyJson('{recovered}'), ...webhookErrors, 409: error('webhook_endpoint_disabled') },
        },
      },
      '/api/webhooks/endpoints/{id}/deliveries': {
        get: {
          summary:
            'Deliveries, newest first, each with its attempts (time, status code, latency, error, response body)',
          security: apiKey,
          parameters: [
            endpointId,
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
            {
              name: 'starting_after',
              in: 'query',
              schema: { type: 'string', format: 'uuid' },
              description: 'next_starting_after of the previous page',
            },
          ],
          responses: { 200: anyJson('{data, next_starting_after}'), ...webhookErrors, 400: error('invalid_query') },
        },
      },
      '/api/webhooks/deliveries/{id}/redeliver': {
        post: {
          summary: 'Send a delivery again, same delivery id, fresh schedule',
          security: apiKey,
          parameters: [{ ...endpointId, description: 'delivery id' }],
          responses: {
            202: anyJson('{delivery_id, status}'),
            ...webhookErrors,
            409: error('webhook_endpoint_disabled'),
          },
        },
      },
      '/healthz': { get: { summary: 'Liveness', responses: { 200: { description: 'The process is up' } } } },
      '/readyz': {
        get: {
          summary: 'Readiness: PostgreSQL and Redis reachable',
          responses: { 200: { description: 'Ready' }, 503: error('service_unavailable') },
        },
      },
      ...Object.assign({}, ...FEATURE_DOCS.map((doc) => doc.paths)),
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'Tenant API key: svc_<prefix>.<secret>' },
      },
      schemas: Object.fromEntries(schemas.map((schema) => [schema.$id, componentSchema(schema)])),
    },
  };
}
