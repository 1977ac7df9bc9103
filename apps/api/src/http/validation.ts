import type { Static, TSchema } from '@sinclair/typebox';
import { AppError, UUID_PATTERN, type ErrorCode } from '@booking/domain';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { uuidCanonicaliser } from './canonical-uuids';
import { isStorableDateTime } from './date-time';

// JSON Schema 2020-12, the dialect of OpenAPI 3.1: the schemas that validate requests are the
// ones published in /api/openapi.json.
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
// ajv-formats' uuid also takes a `urn:uuid:` prefix, which PostgreSQL's uuid type refuses: a
// valid-looking id must never reach the database as a 500.
ajv.addFormat('uuid', UUID_PATTERN);
// ajv-formats' date-time takes leap seconds and year 0000, which are Invalid Date in JavaScript
// or out of PostgreSQL's range: every date-time that comes in is one both can hold.
ajv.addFormat('date-time', { type: 'string', validate: isStorableDateTime });

/**
 * How deeply arrays and objects may nest in a body or query. Our requests nest three levels at
 * most; a crafted body nested thousands deep must not cost a deep walk anywhere after this.
 */
export const MAX_NESTING_DEPTH = 32;

// PostgreSQL text and jsonb cannot hold NUL, and an unpaired UTF-16 surrogate has no UTF-8
// encoding: either would fail in the database as a 500 instead of here as a 400. (With the `u`
// flag a well-formed pair is one code point, so only unpaired halves are category Cs.)
const UNPAIRED_SURROGATE = /\p{Cs}/u;
const isStorable = (text: string) => !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);

export interface FieldProblem {
  field: string;
  message: string;
}

/** A problem as the code chooser of createParser sees it: with the schema keyword that failed. */
export interface SchemaProblem extends FieldProblem {
  keyword: string;
}

/**
 * Compiles a schema once and returns a parser that either returns the typed value, its uuids in
 * lower case (see canonical-uuids), or throws `code` (invalid_body by default, or chosen from
 * the problems) listing every problem found.
 * Before the schema, the value is checked for what no schema can refuse: nesting deeper than
 * MAX_NESTING_DEPTH and characters PostgreSQL cannot store (a chosen code is for schema
 * problems, so those are invalid_body).
 */
export function createParser<T extends TSchema>(
  schema: T,
  code: ErrorCode | ((problems: SchemaProblem[]) => ErrorCode) = 'invalid_body',
) {
  const validate = ajv.compile<Static<T>>(schema);
  const canonicalise = uuidCanonicaliser(schema);
  return (value: unknown): Static<T> => {
    const beyondSchema = problemBeyondSchema(value);
    if (beyondSchema) throw new AppError(typeof code === 'function' ? 'invalid_body' : code, [beyondSchema]);
    if (validate(value)) return (canonicalise ? canonicalise(value) : value) as Static<T>;
    const problems: SchemaProblem[] = (validate.errors ?? []).map((error) => {
      const missing = error.keyword === 'required' ? `/${String(error.params.missingProperty)}` : '';
      const extra = error.keyword === 'additionalProperties' ? `/${String(error.params.additionalProperty)}` : '';
      return {
        field: `${error.instancePath}${missing}${extra}` || '/',
        message: extra ? 'is not a known field' : (error.message ?? 'is invalid'),
        keyword: error.keyword,
      };
    });
    const detail: FieldProblem[] = problems.map(({ field, message }) => ({ field, message }));
    throw new AppError(typeof code === 'function' ? code(problems) : code, detail);
  };
}

/**
 * The first part of a parsed JSON value (or query) that is nested too deeply or holds an
 * unstorable character, in keys as in values. Walked with an explicit stack rather than
 * recursion, so no input can overflow the call stack; every node is visited at most once.
 */
function problemBeyondSchema(root: unknown): FieldProblem | undefined {
  const pending: { value: unknown; field: string; depth: number }[] = [{ value: root, field: '', depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, field, depth } = next;
    if (typeof value === 'string') {
      if (!isStorable(value)) return unstorableAt(field);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_NESTING_DEPTH) {
      return { field: field || '/', message: `must not nest arrays and objects more than ${MAX_NESTING_DEPTH} deep` };
    }
    for (const [key, child] of Object.entries(value)) {
      // A bad key is reported at its object: the answer never echoes what cannot be stored.
      if (!isStorable(key)) return unstorableAt(field);
      pending.push({
        value: child,
        field: `${field}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`,
        depth: depth + 1,
      });
    }
  }
  return undefined;
}

const unstorableAt = (field: string): FieldProblem => ({
  field: field || '/',
  message: 'must not contain NUL characters or unpaired UTF-16 surrogates',
});
