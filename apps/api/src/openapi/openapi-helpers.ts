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
