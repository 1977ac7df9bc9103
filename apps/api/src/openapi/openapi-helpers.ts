import type { TSchema } from '@sinclair/typebox';
import { KEY_FORMAT, MAX_KEY_LENGTH } from '../http/idempotency';

/** Building blocks for the features' operations (see openapi-operation.ts). */

/** A reference to a component schema, by TypeBox schema (its $id) or by name. */
export const ref = (schema: TSchema | string) => ({
  $ref: `#/components/schemas/${typeof schema === 'string' ? schema : schema.$id}`,
});

/** A success response with a JSON body. */
export const ok = (description: string, schema: TSchema) => ({
  description,
  content: { 'application/json': { schema: ref(schema) } },
});

/** A path parameter that is a uuid; an id that is not one names nothing, so it is the route's 404. */
export const uuidPathParam = (description: string) => ({
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', format: 'uuid' },
  description,
});

/** The `limit` and `starting_after` query parameters of a page of a list. */
export const pageParams = (startingAfter: string) => [
  {
    name: 'limit',
    in: 'query',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    description: 'items per page',
  },
  {
    name: 'starting_after',
    in: 'query',
    required: false,
    schema: { type: 'string', format: 'uuid' },
    description: startingAfter,
  },
];

const STORED_RETRY =
  'A retry with the same key and body gets the stored answer (with Idempotent-Replayed: true) for IDEMPOTENCY_TTL_SECONDS (10 minutes; a 5xx is not stored), and a retry while the first request runs is 409 idempotency_request_in_progress.';
const REBUILT_RETRY =
  'A retry with the same key and body for IDEMPOTENCY_TTL_SECONDS (10 minutes) gets the work the first request did, never done twice, even while the first request still runs: the same 2xx answer, or the stored 4xx (with Idempotent-Replayed: true, on whichever run found the work done).';

/**
 * The Idempotency-Key header parameter; `scope` says whose keys are kept apart, `rebuilt` that the
 * route answers a retry from its work rather than from a stored answer (idempotency's rebuildsAnswers).
 */
export const idempotencyKeyParam = (scope: string, rebuilt = false) => ({
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: KEY_FORMAT.source },
  description: `Optional; 1 to ${MAX_KEY_LENGTH} visible ASCII characters, else 400 invalid_idempotency_key. ${scope}, and to the credentials sent. ${rebuilt ? REBUILT_RETRY : STORED_RETRY} The same key with another body is 422 idempotency_key_reused.`,
});
