import fc from 'fast-check';

// Arbitraries for the HTTP fuzz test: requests built from the served OpenAPI document, half of
// them plausible (the schema's own shape, real ids of the seeded tenant) so they get past
// validation into the use cases, half hostile (broken paths, bodies, headers and text).

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type JsonSchema = { [keyword: string]: unknown };

/** One path and method of the OpenAPI document, as the fuzzer drives it. */
export interface Operation {
  method: Method;
  /** The path template, e.g. `/api/bookings/{id}/cancel`. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  bodySchema: JsonSchema | undefined;
  /** Whether a tenant API key is required (not merely one way in, as on reschedule). */
  requiresKey: boolean;
}

/** What the fuzzer knows of the seeded tenant: real values by the name of the field or parameter they fill. */
export interface Known {
  /** Values for body fields, query parameters and path parameters, by name (`hold_id`, `tenant`, `token`...). */
  byName: Record<string, string[]>;
  /** Real ids of every kind, for `{id}` path parameters. */
  ids: string[];
  apiKeys: string[];
  bookingTokens: string[];
  manageTokens: string[];
}

export interface FuzzCase {
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Sent with a valid tenant API key. */
  authenticated: boolean;
}

/** The tenant's real values for a name; own keys only, since the fuzzer also tries names like `__proto__`. */
const realValues = (known: Known, name: string): string[] =>
  Object.hasOwn(known.byName, name) ? known.byName[name]! : [];

const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Every path and method of the document, in a stable order (so a seed replays the same run). */
export function operationsOf(doc: {
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema> };
}): Operation[] {
  const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined =>
    typeof schema?.$ref === 'string' ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
  return Object.entries(doc.paths)
    .flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => {
        const operation = item[method]!;
        const parameters = (operation.parameters ?? []) as { in: string; name: string }[];
        const content = (operation.requestBody as { content?: Record<string, { schema?: JsonSchema }> })?.content;
        const security = operation.security as Record<string, unknown>[] | undefined;
        return {
          method,
          path,
          pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
          queryParams: parameters.filter((p) => p.in === 'query').map((p) => p.name),
          bodySchema: resolve(content?.['application/json']?.schema),
          requiresKey: !!security?.length && security.every((requirement) => 'apiKey' in requirement),
        };
      }),
    )
    .sort((a, b) => `${a.path} ${a.method}`.localeCompare(`${b.path} ${b.method}`));
}

// Text that has broken services before: unpaired surrogates, NUL, bidi and BOM marks, long runs.
const NASTY_STRINGS = [
  '\ud800',
  'a\udfffb',
  '\udc00\ud800',
  'a\u0000b',
  '',
  ' ',
  '\u202e',
  '\ufeff',
  'x'.repeat(5000),
  '%ZZ',
  '../..',
  "' OR 1=1 --",
  '${jndi:x}',
  '\\',
];
const nastyString = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 24 }),
);

/** Arrays nested past the validation layer's depth limit, but small enough to stay under the body limit. */
const deeplyNested = fc.integer({ min: 33, max: 60 }).map((depth) => {
  let value: unknown = 'x';
  for (let level = 0; level < depth; level += 1) value = [value];
  return value;
});

/** A value of the wrong kind for any field. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 2 ** 31, [], {}),
  deeplyNested,
  fc.jsonValue({ maxDepth: 3 }),
);

const uuid = () => fc.uuid().map(String);

/** `value` in one case out of `oneIn`, else undefined. */
const sometimes = <T>(value: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: value });

/**
 * A value that fits `schema` (roughly: enough to pass validation now and then), with strings,
 * ids and numbers drawn from what the tenant really has where the field name says what it is.
 */
function fitting(schema: JsonSchema | undefined, name: string, known: Known, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 });
  const real = realValues(known, name);
  // A real value most of the time; now and then whatever the schema allows (name '' knows none).
  if (real.length > 0) {
    return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...real) }, fitting(schema, '', known, depth + 1));
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const variants = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (variants) return fc.oneof(...variants.map((variant) => fitting(variant, name, known, depth + 1)));
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const model = Object.fromEntries(
        Object.entries(properties).map(([key, property]) => [key, fitting(property, key, known, depth + 1)]),
      );
      return fc.record(model, { requiredKeys: (schema.required ?? []) as string[] });
    }
    case 'array':
      return fc.array(fitting(schema.items as JsonSchema, name, known, depth + 1), {
        maxLength: Math.min(Number(schema.maxItems ?? 3), 3),
      });
    case 'integer':
      return fc.integer({ min: Number(schema.minimum ?? -1000), max: Math.min(Number(schema.maximum ?? 1e6), 1e6) });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'string':
      return stringFitting(schema);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringFitting(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uuid':
      return uuid();
    case 'email':
      return fc.emailAddress();
    case 'uri':
      return fc.constantFrom('https://hooks.example.com/fuzz', 'http://127.0.0.1/x', 'not a url');
    case 'date-time':
      return fc.oneof(
        fc
          .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true })
          .map((date) => date.toISOString()),
        fc.constantFrom(
          '2026-01-01T23:59:60Z',
          '0000-01-01T00:00:00Z',
          '+275760-09-13T00:00:00Z',
          '2026-02-30T10:00:00Z',
        ),
      );
    default:
      return fc.string({
        minLength: Number(schema.minLength ?? 0),
        maxLength: Math.min(Number(schema.maxLength ?? 40), 40),
        unit: 'grapheme',
      });
  }
}

/** One field of a fitting object replaced by a hostile value, or a hostile extra field. */
function withOneHostileField(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(base, hostileValue, fc.nat(), nastyString).map(([value, hostile, pick, extraKey]) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return hostile;
    const keys = Object.keys(value);
    const key = keys.length > 0 && pick % 4 !== 0 ? keys[pick % keys.length]! : extraKey;
    return { ...value, [key]: hostile };
  });
}

const nestedArrays = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Bodies no schema can describe: not JSON, the wrong JSON, nested thousands deep, over the size limit. */
const RAW_BODIES = [
  '',
  '{',
  '{"a":',
  '[',
  'nul',
  '{"a":1,}',
  "{'a':1}",
  '{"a":1}{"b":2}',
  '\ufeff{}',
  '1e400',
  '{"a":1e400}',
  '[]',
  'null',
  '0',
  '"x"',
  'true',
  '[{}]',
  nestedArrays(5000),
  nestedObjects(5000),
  '{"\\ud800":1}',
  '{"a":"\\udfff"}',
  '{"a":"\\u0000"}',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  '{"a":1,"a":2}',
  JSON.stringify({ notes: 'x'.repeat(70 * 1024) }),
];

function bodyFor(operation: Operation, known: Known): fc.Arbitrary<string | undefined> {
  const raw = fc.constantFrom(...RAW_BODIES);
  const anyJson = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value));
  if (!operation.bodySchema) return sometimes(fc.oneof(raw, anyJson), 2);
  const fit = fitting(operation.bodySchema, '', known);
  return fc.oneof(
    { weight: 3, arbitrary: fit.map((value) => JSON.stringify(value)) },
    { weight: 3, arbitrary: withOneHostileField(fit).map((value) => JSON.stringify(value)) },
    { weight: 2, arbitrary: raw },
    { weight: 1, arbitrary: anyJson },
  );
}

/** encodeURIComponent, except for text it cannot encode (an unpaired surrogate): then a broken escape. */
const encode = (text: string) => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
};

const BAD_SEGMENTS = [
  '%ZZ',
  '%',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AF',
  '%00',
  '%FF',
  'abc%',
  '%%',
  '%2e%2e',
  '%2F',
  '..',
  'null',
  '-1',
  'x'.repeat(4000),
];

function segmentFor(name: string, known: Known): fc.Arbitrary<string> {
  const real = name === 'id' ? known.ids : realValues(known, name);
  return fc.oneof(
    { weight: real.length > 0 ? 4 : 0, arbitrary: fc.constantFrom('', ...real).map(encode) },
    { weight: 1, arbitrary: uuid() },
    { weight: 1, arbitrary: uuid().map((id) => `urn:uuid:${id}`) },
    { weight: 2, arbitrary: fc.constantFrom(...BAD_SEGMENTS) },
    { weight: 1, arbitrary: nastyString.map(encode) },
  );
}

/** Whole-path damage on top of the parameters: empty segments, dot segments, a trailing unicode segment. */
const PATH_DAMAGE: ((path: string) => string)[] = [
  (path) => path.replace(/^\//, '//'),
  (path) => path.replace(/\/([^/]*)$/, '//$1'),
  (path) => `${path}/`,
  (path) => path.replace(/^\/api\//, '/api/./'),
  (path) => `${path}/%F0%9F%9B%B6`,
  (path) => `${path}%ZZ`,
];

function urlFor(operation: Operation, known: Known): fc.Arbitrary<string> {
  const segments = fc.tuple(...operation.pathParams.map((name) => segmentFor(name, known)));
  const damage = sometimes(fc.constantFrom(...PATH_DAMAGE), 5);
  const queryValue = (name: string) =>
    fc.oneof(fc.constantFrom('1', ...realValues(known, name)).map(encode), nastyString.map(encode), fc.constant('%ZZ'));
  const queryNames = [...operation.queryParams, '__proto__', 'limit[]', 'x'];
  const query = sometimes(
    fc.array(
      fc.constantFrom(...queryNames).chain((name) => queryValue(name).map((value) => `${encode(name)}=${value}`)),
      { minLength: 1, maxLength: 4 },
    ),
    operation.queryParams.length > 0 ? 2 : 6,
  );
  return fc.tuple(segments, damage, query).map(([values, damaged, pairs]) => {
    let index = 0;
    const path = operation.path.replace(/\{[^}]+\}/g, () => values[index++]!);
    return `${damaged ? damaged(path) : path}${pairs ? `?${pairs.join('&')}` : ''}`;
  });
}

/** Header values Node lets a client send: tab, visible ASCII and Latin-1, nothing else. */
const headerText = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
    .map((code) => String.fromCharCode(code)),
  maxLength: 40,
});

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=koi8-r',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
  '*/*',
  'garbage',
];
const CONTENT_ENCODINGS = ['gzip', 'deflate', 'br', 'identity', 'compress', 'zstd', 'gzip, gzip', 'x-garbage'];

/** A value that looks like a credential and is not one: truncated, padded or one character changed. */
const spoiled = (values: string[]) =>
  fc.tuple(fc.constantFrom(...values), fc.nat()).map(([value, at]) => {
    const index = at % value.length;
    return `${value.slice(0, index)}${value[index] === 'A' ? 'B' : 'A'}${value.slice(index + 1)}`;
  });

function headersFor(operation: Operation, known: Known, authenticated: boolean): fc.Arbitrary<Record<string, string>> {
  const authorization = authenticated
    ? fc.constantFrom(...known.apiKeys).map((key) => `Bearer ${key}`)
    : fc.option(
        fc.oneof(
          headerText.map((text) => `Bearer ${text}`),
          spoiled(known.apiKeys).map((key) => `Bearer ${key}`),
          fc.constantFrom('Bearer', 'Basic Zm9vOmJhcg==', `Bearer ${'x'.repeat(3000)}`, 'Bearer \u00ff\u00fe'),
          headerText,
        ),
        { nil: undefined, freq: 3 },
      );
  return fc
    .record({
      'Content-Type': fc.option(
        fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, fc.constantFrom(...CONTENT_TYPES)),
        { nil: undefined, freq: 6 },
      ),
      'Content-Encoding': sometimes(fc.constantFrom(...CONTENT_ENCODINGS), 6),
      'Idempotency-Key': sometimes(
        fc.oneof(fc.constantFrom('', ' ', 'k'.repeat(256), 'k'.repeat(255), 'é', 'a b'), headerText, uuid()),
        3,
      ),
      Authorization: authorization,
      'X-Booking-Token': sometimes(
        fc.oneof(fc.constantFrom(...known.bookingTokens), spoiled(known.bookingTokens), headerText),
        operation.path.includes('payment-intent') ? 2 : 5,
      ),
      'X-Manage-Token': sometimes(
        fc.oneof(fc.constantFrom(...known.manageTokens), spoiled(known.manageTokens), headerText),
        operation.path.includes('reschedule') ? 2 : 5,
      ),
      'Stripe-Signature': sometimes(headerText, 5),
    })
    .map((headers) =>
      Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    );
}

/** A request to `operation`: authenticated with a real tenant key in half the cases. */
export function caseFor(operation: Operation, known: Known): fc.Arbitrary<FuzzCase> {
  return fc.boolean().chain((authenticated) =>
    fc
      .record({
        url: urlFor(operation, known),
        headers: headersFor(operation, known, authenticated),
        body: bodyFor(operation, known),
      })
      .map((parts) => ({ ...parts, authenticated })),
  );
}
