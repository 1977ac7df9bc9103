import type { ErrorCode } from '@booking/domain';
import { Type, type TSchema } from '@sinclair/typebox';
import { ERROR_STATUSES } from '../http/error-statuses';

/** The spec's Error shape; each operation narrows `error` to the codes it answers. */
export const ErrorBody = Type.Object(
  {
    error: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_STATUSES),
      description: 'machine code; each has one HTTP status',
    }),
    detail: Type.Optional(
      Type.Unknown({ description: 'more about this error, by code: a text, the fields at fault or the figures' }),
    ),
  },
  { additionalProperties: false, $id: 'Error' },
);

/**
 * A TypeBox schema as an OpenAPI component: `$ref: "Experience"` becomes a component reference,
 * and the `$id` goes, since inside a document it would change what the references resolve against.
 */
function componentSchema(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (key === '$id') return undefined;
    return key === '$ref' && typeof value === 'string' && !value.startsWith('#')
      ? `#/components/schemas/${value}`
      : value;
  });
}

/** The components of `schemas`, by $id; two different schemas may not claim one name. */
export function componentSchemas(schemas: TSchema[]): Record<string, unknown> {
  const components: Record<string, unknown> = {};
  for (const schema of schemas) {
    const name = schema.$id;
    const component = componentSchema(schema);
    if (!name) throw new Error(`a component schema without $id: ${JSON.stringify(schema).slice(0, 100)}`);
    if (name in components && JSON.stringify(components[name]) !== JSON.stringify(component)) {
      throw new Error(`two schemas are called ${name}`);
    }
    components[name] = component;
  }
  return components;
}
