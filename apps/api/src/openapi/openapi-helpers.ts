import type { TSchema } from '@sinclair/typebox';

/** Building blocks for OpenAPI path items, shared by the document and each feature's fragment. */

/** A reference to a component schema, by TypeBox schema (its $id) or by name. */
export const ref = (schema: TSchema | string) => ({
  $ref: `#/components/schemas/${typeof schema === 'string' ? schema : schema.$id}`,
});

export const json = (schema: TSchema | string) => ({ content: { 'application/json': { schema: ref(schema) } } });

/** A response in the spec's Error shape. */
export const error = (description: string) => ({ description, ...json('Error') });

/** The tenant API key security requirement. */
export const apiKey = [{ apiKey: [] }];

/** The Idempotency-Key header parameter; `scope` says whose keys are kept apart. */
export const idempotencyKeyParam = (scope: string) => ({
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  description: `${scope}. A retry with the same key and body gets the stored answer for IDEMPOTENCY_TTL_SECONDS (10 minutes; a 5xx is not stored); the same key with another body is 422, and a retry while the first request runs is 409.`,
});
