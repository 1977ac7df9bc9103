import { SUBSCRIBABLE_EVENTS, type SubscribableEvent } from '@booking/events';
import { Type, type Static } from '@sinclair/typebox';

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

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    events: Type.Array(Type.String(), { description: 'empty: every operator-subscribable event' }),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
    consecutive_failures: Type.Integer({ minimum: 0 }),
    disabled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    previous_secret_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    signing_secret: Type.Optional(
      Type.String({ description: 'only in the answers that create it: creation and rotation' }),
    ),
  },
  { $id: 'WebhookEndpoint' },
);
