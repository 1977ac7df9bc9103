import { SUBSCRIBABLE_EVENTS, type SubscribableEvent } from '@booking/events';
import { Type, type Static, type TSchema } from '@sinclair/typebox';

// One `enum` rather than a union of constants, so a wrong name is one clear problem, not fifty.
const EventName = Type.Unsafe<SubscribableEvent>({
  type: 'string',
  enum: [...SUBSCRIBABLE_EVENTS],
  description: 'an operator-subscribable event of the catalogue',
});

export const CreateEndpointRequest = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: 2048, description: 'HTTPS receiver address' }),
    events: Type.Optional(
      Type.Array(EventName, {
        uniqueItems: true,
        description: 'event names to receive; omitted or empty means every operator-subscribable event',
      }),
    ),
  },
  { additionalProperties: false, $id: 'CreateEndpointRequest' },
);
export type CreateEndpointRequest = Static<typeof CreateEndpointRequest>;

export const TestDeliveryRequest = Type.Object(
  { event: Type.Optional(EventName) },
  { additionalProperties: false, $id: 'TestDeliveryRequest' },
);

export const RecoverRequest = Type.Object(
  {
    since: Type.String({ format: 'date-time', description: 'resend failed deliveries created at or after this time' }),
  },
  { additionalProperties: false, $id: 'RecoverRequest' },
);

export const DeliveriesQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ pattern: '^([1-9]|[1-9][0-9]|100)$', description: '1 to 100, default 20' })),
    starting_after: Type.Optional(
      Type.String({ format: 'uuid', description: 'the next_starting_after of the previous page' }),
    ),
  },
  { additionalProperties: false },
);

const Uuid = Type.String({ format: 'uuid' });
const Timestamp = Type.String({ format: 'date-time' });
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** A reference to a component schema that keeps the TypeScript type of what it names. */
const refTo = <T extends TSchema>(schema: T) => Type.Unsafe<Static<T>>(Type.Ref(schema.$id!));

/** An endpoint as every answer shows it; its secrets never, except as `signing_secret` below. */
const endpointFields = {
  id: Uuid,
  url: Type.String(),
  events: Type.Array(Type.String(), { description: 'empty: every operator-subscribable event' }),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
    description: 'disabled after WEBHOOK_AUTO_DISABLE_AFTER consecutive failed attempts; resumed by an operator',
  }),
  consecutive_failures: Type.Integer({ minimum: 0 }),
  disabled_at: nullable(Timestamp),
  previous_secret_expires_at: nullable(Timestamp),
  created_at: Timestamp,
};

export const WebhookEndpoint = Type.Object(
  {
    ...endpointFields,
    signing_secret: Type.Optional(
      Type.String({ description: 'only in the answers that create it: creation and rotation' }),
    ),
  },
  { $id: 'WebhookEndpoint' },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const WebhookEndpointList = Type.Object(
  { data: Type.Array(refTo(WebhookEndpoint), { description: 'oldest first, without secrets' }) },
  { $id: 'WebhookEndpointList' },
);
export type WebhookEndpointList = Static<typeof WebhookEndpointList>;

export const ResumedWebhookEndpoint = Type.Object(
  {
    ...endpointFields,
    resumed_deliveries: Type.Integer({ minimum: 0, description: 'deliveries that waited and are sent now' }),
  },
  { $id: 'ResumedWebhookEndpoint' },
);
export type ResumedWebhookEndpoint = Static<typeof ResumedWebhookEndpoint>;

export const TestDeliveryResponse = Type.Object({ delivery_id: Uuid }, { $id: 'TestDeliveryResponse' });
export type TestDeliveryResponse = Static<typeof TestDeliveryResponse>;

export const RecoverResponse = Type.Object(
  { recovered: Type.Integer({ minimum: 0, description: 'abandoned deliveries sent again' }) },
  { $id: 'RecoverResponse' },
);
export type RecoverResponse = Static<typeof RecoverResponse>;

export const RedeliverResponse = Type.Object(
  { delivery_id: Uuid, status: Type.Literal('pending') },
  { $id: 'RedeliverResponse' },
);
export type RedeliverResponse = Static<typeof RedeliverResponse>;

export const WebhookDelivery = Type.Object(
  {
    id: Uuid,
    event: Type.String({ description: 'the event name' }),
    event_id: nullable(Type.String({ format: 'uuid', description: 'null for a test delivery' })),
    status: Type.Union(
      [Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('waiting'), Type.Literal('abandoned')],
      {
        description:
          'pending: queued or retrying; waiting: its endpoint is disabled; abandoned: every attempt of the schedule failed',
      },
    ),
    is_test: Type.Boolean(),
    attempt_count: Type.Integer({ minimum: 0 }),
    next_attempt_at: nullable(Timestamp),
    created_at: Timestamp,
    attempts: Type.Array(
      Type.Object({
        attempt_number: Type.Integer({ minimum: 1 }),
        started_at: Timestamp,
        status_code: nullable(Type.Integer({ description: "the receiver's HTTP status; null when none came" })),
        duration_ms: Type.Integer({ minimum: 0 }),
        succeeded: Type.Boolean(),
        error: nullable(Type.String()),
        response_body: nullable(Type.String({ description: "the start of the receiver's answer" })),
      }),
    ),
  },
  { $id: 'WebhookDelivery' },
);

export const WebhookDeliveryList = Type.Object(
  {
    data: Type.Array(refTo(WebhookDelivery), { description: 'newest first' }),
    next_starting_after: nullable(
      Type.String({ format: 'uuid', description: 'pass as starting_after for the next page; null on the last page' }),
    ),
  },
  { $id: 'WebhookDeliveryList' },
);
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>;
