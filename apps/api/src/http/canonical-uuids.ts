import type { TSchema } from '@sinclair/typebox';

/** Rewrites a value a schema has accepted, in place, and returns it. */
export type Canonicalise = (value: unknown) => unknown;

interface Schema {
  type?: string | string[];
  format?: string;
  properties?: Record<string, Schema>;
  items?: Schema | Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
}

// Request schemas nest three levels; this only bounds the walk of a schema that refers to itself.
const MAX_DEPTH = 16;

const lowerCase: Canonicalise = (value) => (typeof value === 'string' ? value.toLowerCase() : value);

/**
 * For a request schema, the function that puts every uuid the schema accepted in the form
 * PostgreSQL prints it (lower case), or undefined when the schema names none. A uuid is compared
 * as text in places (Redis keys such as a hold's, ids matched against rows read back), where
 * `3F2A…` and `3f2a…` would be two ids; clients that print uuids in upper case (Swift's
 * `uuidString`, .NET's `ToString("D").ToUpper()`) must find what they were given. Compiled once
 * per schema: fields through `properties`, array `items`, and unions (see compileUnion).
 */
export function uuidCanonicaliser(schema: TSchema): Canonicalise | undefined {
  return compile(schema as Schema, 0);
}

function compile(schema: Schema, depth: number): Canonicalise | undefined {
  if (depth > MAX_DEPTH) return undefined;
  if (schema.format === 'uuid') return lowerCase;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return compileUnion(branches, depth);
  if (schema.properties) return fieldsCanonicaliser(compileFields([schema], depth));
  if (schema.items && !Array.isArray(schema.items)) {
    const canonicalise = compile(schema.items, depth + 1);
    if (!canonicalise) return undefined;
    return (value) => {
      if (Array.isArray(value)) for (let i = 0; i < value.length; i += 1) value[i] = canonicalise(value[i]);
      return value;
    };
  }
  return undefined;
}

/**
 * A union: a string is lower-cased when the only branch taking strings is a uuid (a nullable
 * id); an object's field when every branch naming that field says how (the lines of a POS order,
 * one object shape per kind of line).
 */
function compileUnion(branches: Schema[], depth: number): Canonicalise | undefined {
  const takingStrings = branches.filter((branch) => takesStrings(branch));
  const forStrings = takingStrings.length === 1 && takingStrings[0]!.format === 'uuid';
  const forObjects = fieldsCanonicaliser(compileFields(branches, depth));
  if (!forStrings && !forObjects) return undefined;
  return (value) =>
    typeof value === 'string' ? (forStrings ? lowerCase(value) : value) : (forObjects?.(value) ?? value);
}

/** Each field of `objects` with its canonicaliser, when every one of them that names it has one. */
function compileFields(objects: Schema[], depth: number): [string, Canonicalise][] {
  const byName = new Map<string, Canonicalise[] | null>();
  for (const object of objects) {
    for (const [name, field] of Object.entries(object.properties ?? {})) {
      const canonicalise = compile(field, depth + 1);
      const known = byName.get(name);
      // A field some branch leaves as sent (free text, say) is left as sent in every branch.
      if (known !== null) byName.set(name, canonicalise ? [...new Set([...(known ?? []), canonicalise])] : null);
    }
  }
  return [...byName].flatMap(([name, each]): [string, Canonicalise][] =>
    each ? [[name, (value) => each.reduce((v, canonicalise) => canonicalise(v), value)]] : [],
  );
}

function fieldsCanonicaliser(fields: [string, Canonicalise][]): Canonicalise | undefined {
  if (fields.length === 0) return undefined;
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const object = value as Record<string, unknown>;
    for (const [name, canonicalise] of fields) {
      if (Object.hasOwn(object, name)) object[name] = canonicalise(object[name]);
    }
    return value;
  };
}

function takesStrings(schema: Schema): boolean {
  return (
    schema.type === undefined ||
    schema.type === 'string' ||
    (Array.isArray(schema.type) && schema.type.includes('string'))
  );
}
