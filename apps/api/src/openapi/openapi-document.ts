import { Type, type TSchema } from '@sinclair/typebox';
import { BookingRequest, BookingResponse } from '../bookings/booking-schemas';
import { HoldRequest, HoldResponse } from '../holds/hold-schemas';
import { Experience, Slot, WidgetExperienceResponse } from '../widget/widget-schemas';

const ErrorBody = Type.Object(
  { error: Type.String({ description: 'machine code' }), detail: Type.Optional(Type.Unknown()) },
  { $id: 'Error' },
);

const ref = (schema: TSchema) => ({ $ref: `#/components/schemas/${schema.$id}` });
const json = (schema: TSchema) => ({ content: { 'application/json': { schema: ref(schema) } } });
const error = (description: string) => ({ description, ...json(ErrorBody) });

const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description:
    'Retries with the same key and body get the stored response for IDEMPOTENCY_TTL_SECONDS (10 minutes); the same key with another body is 422, and a retry while the first request runs is 409.',
};

const rateLimited = error('Rate limited (per IP); see the RateLimit and RateLimit-Policy headers');

/** Turns the TypeBox `$ref: "Experience"` style into OpenAPI component references. */
function componentSchema(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) =>
    key === '$ref' && typeof value === 'string' && !value.startsWith('#') ? `#/components/schemas/${value}` : value,
  );
}

/** The OpenAPI 3.1 description of the API, built from the same schemas that validate requests. */
export function buildOpenApiDocument(serverUrl: string) {
  const schemas = [ErrorBody, Experience, Slot, WidgetExperienceResponse, HoldRequest, HoldResponse, BookingRequest, BookingResponse];
  return {
    openapi: '3.1.0',
    info: {
      title: 'Booking Service',
      version: '1.0.0',
      description: 'Public booking API for attraction venues: discovery, holds and bookings.',
    },
    servers: [{ url: serverUrl }],
    paths: {
      '/api/widget/experience': {
        get: {
          summary: 'An experience and its bookable slots for the next 14 days',
          parameters: [
            { name: 'tenant', in: 'query', required: true, schema: { type: 'string' }, description: 'tenant slug' },
            { name: 'experience', in: 'query', required: true, schema: { type: 'string' }, description: 'experience slug' },
          ],
          responses: {
            200: { description: 'The experience and slots with seats_remaining >= min_party_size', ...json(WidgetExperienceResponse) },
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
      '/healthz': { get: { summary: 'Liveness', responses: { 200: { description: 'The process is up' } } } },
      '/readyz': {
        get: {
          summary: 'Readiness: PostgreSQL and Redis reachable',
          responses: { 200: { description: 'Ready' }, 503: error('service_unavailable') },
        },
      },
    },
    components: { schemas: Object.fromEntries(schemas.map((schema) => [schema.$id, componentSchema(schema)])) },
  };
}
