import {
  EVENT_FIELDS,
  EVENT_SCHEMA_VERSIONS,
  SUBSCRIBABLE_EVENTS,
  deliveredDataSchema,
  type RecordedEventName,
} from '@booking/events';
import { Type, type TSchema } from '@sinclair/typebox';

/** `booking.party_updated` → `BookingPartyUpdated`: component names for an event's schemas. */
const pascal = (name: string) =>
  name
    .split(/[._]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

const header = (description: string, schema: object = { type: 'string' }) => ({
  in: 'header',
  required: true,
  description,
  schema,
});

/** The request headers of every delivery (see docs/webhooks.md, "What a receiver gets"). */
const DELIVERY_HEADERS = [
  {
    name: 'X-Service-Delivery-Id',
    ...header('the delivery id, equal to body `id`; the same on every attempt', { type: 'string', format: 'uuid' }),
  },
  { name: 'X-Service-Event', ...header('the event name, equal to body `event`') },
  {
    name: 'X-Service-Timestamp',
    ...header('milliseconds since the epoch when the attempt was signed', { type: 'string', pattern: '^[0-9]+$' }),
  },
  {
    name: 'X-Service-Signature',
    ...header('`v1,` + lowercase hex HMAC-SHA256 of `<timestamp>.<raw body>`, keyed with the endpoint secret', {
      type: 'string',
      pattern: '^v1,[0-9a-f]{64}$',
    }),
  },
  {
    name: 'X-Service-Signature-Previous',
    in: 'header',
    required: false,
    description: 'the same with the previous secret, during the 7 days after a rotation',
    schema: { type: 'string', pattern: '^v1,[0-9a-f]{64}$' },
  },
];

const produced = Object.keys(EVENT_FIELDS) as RecordedEventName[];
/** Recorded for the audit trail, never sent (the catalogue has no such subscription). */
const delivered = produced.filter((name) => (SUBSCRIBABLE_EVENTS as readonly string[]).includes(name));

const envelopeOf = (name: RecordedEventName) =>
  Type.Object(
    {
      id: Type.String({ format: 'uuid', description: 'the delivery id; deduplicate on it' }),
      event: Type.Literal(name),
      emitted_at: Type.String({ format: 'date-time', description: 'when the event was recorded' }),
      data: Type.Ref(`${pascal(name)}Data`),
    },
    { $id: `${pascal(name)}Event`, description: `The body of a \`${name}\` delivery.` },
  );

const schemas: TSchema[] = delivered.flatMap((name) => [
  envelopeOf(name),
  deliveredDataSchema(name, { $id: `${pascal(name)}Data` }),
]);

const webhooks = Object.fromEntries(
  delivered.map((name) => [
    name,
    {
      post: {
        summary: `${name} (schema version ${EVENT_SCHEMA_VERSIONS[name]})`,
        description: `Sent to every active endpoint subscribed to \`${name}\` (or to all events), signed with its secret, at least once and in no fixed order.`,
        parameters: DELIVERY_HEADERS,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${pascal(name)}Event` } } },
        },
        responses: {
          '200': { description: 'Any 2xx acknowledges the delivery; nothing more is sent for it.' },
          '400': {
            description:
              'Any other answer, a timeout or a refused connection is retried on the documented schedule, then the delivery is abandoned.',
          },
        },
      },
    },
  ]),
);

/**
 * The OpenAPI 3.1 `webhooks` section: one signed POST per delivered event, its body the
 * envelope with that event's data, generated from the payload schemas producers are typed by.
 */
export const webhooksOpenApi: { webhooks: Record<string, unknown>; schemas: TSchema[] } = { webhooks, schemas };
