import type { Static, TSchema } from '@sinclair/typebox';
import { AppError, UUID_PATTERN, type ErrorCode } from '@booking/domain';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

// JSON Schema 2020-12, the dialect of OpenAPI 3.1: the schemas that validate requests are the
// ones published in /api/openapi.json.
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
// ajv-formats' uuid also takes a `urn:uuid:` prefix, which PostgreSQL's uuid type refuses: a
// valid-looking id must never reach the database as a 500.
ajv.addFormat('uuid', UUID_PATTERN);

export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * Compiles a schema once and returns a parser that either returns the typed value or throws
 * `code` (invalid_body by default, or chosen from the problems) listing every problem found.
 */
export function createParser<T extends TSchema>(
  schema: T,
  code: ErrorCode | ((problems: FieldProblem[]) => ErrorCode) = 'invalid_body',
) {
  const validate = ajv.compile<Static<T>>(schema);
  return (value: unknown): Static<T> => {
    // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the database.
    if (containsNul(value)) {
      throw new AppError(typeof code === 'function' ? 'invalid_body' : code, [
        { field: '/', message: 'must not contain NUL characters' },
      ]);
    }
    if (validate(value)) return value;
    const problems: FieldProblem[] = (validate.errors ?? []).map((error) => {
      const missing = error.keyword === 'required' ? `/${String(error.params.missingProperty)}` : '';
      const extra = error.keyword === 'additionalProperties' ? `/${String(error.params.additionalProperty)}` : '';
      return {
        field: `${error.instancePath}${missing}${extra}` || '/',
        message: extra ? 'is not a known field' : (error.message ?? 'is invalid'),
      };
    });
    throw new AppError(typeof code === 'function' ? code(problems) : code, problems);
  };
}

function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value !== null && typeof value === 'object') return Object.values(value).some(containsNul);
  return false;
}
