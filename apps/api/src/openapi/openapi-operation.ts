import type { Config } from '@booking/config';
import type { ErrorCode } from '@booking/domain';
import type { TSchema } from '@sinclair/typebox';
import { ERROR_STATUSES } from '../http/error-statuses';
import { MAX_KEY_LENGTH } from '../http/idempotency';
import { responseHeaders, type HeaderTraits } from './openapi-headers';
import { idempotencyKeyParam, ref } from './openapi-helpers';
import type { Access, Codes } from './openapi-security';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A response object of the document; its headers are added from the operation's traits. */
interface ResponseObject {
  description: string;
  content?: Record<string, unknown>;
}

/**
 * One operation as a feature describes it: what is particular to it. What every operation
 * shares (the errors of the HTTP layer, response headers, Idempotency-Key, rate limit, the
 * per-operation Error schema) is added by `describeOperation`.
 */
export interface OperationSpec {
  method: Method;
  /** OpenAPI path template, `{id}` where Express has `:id`. */
  path: string;
  /** camelCase verb phrase; also names the operation's Error schema (`createBooking` → `CreateBookingError`). */
  operationId: string;
  summary: string;
  description?: string;
  access: Access;
  /** Path and query parameters (Idempotency-Key is added from `idempotency`). */
  parameters?: object[];
  /** Whether unknown query parameters are refused (400 invalid_query), as the route's query schema says. */
  strictQuery?: boolean;
  /** A JSON request body, with an example a client can send as it is. */
  requestBody?: { schema: TSchema; example: unknown; required?: boolean; description?: string };
  /** A body that is not JSON but the bytes themselves (an image), of one of `mediaTypes`. */
  rawBody?: { mediaTypes: string[]; description: string };
  /** Success responses by status. */
  responses: Record<number, ResponseObject>;
  /** The operation's own error codes, each with when; the HTTP layer's are added. */
  errors: Codes;
  /** Honours Idempotency-Key; says who a key belongs to, e.g. 'Scoped to the route and the client address'. */
  idempotency?: string;
  /** With `idempotency`: a retry runs the route again, which finds its work (idempotency's rebuildsAnswers). */
  rebuildsAnswers?: boolean;
  /** Requests a minute per client address, for a rate-limited route. */
  rateLimitPerMinute?: (config: Config) => number;
}

/** The operations of one feature, its tag, and the schemas they reference. */
export interface OpenApiFeature {
  tag: { name: string; description: string };
  operations: OperationSpec[];
  schemas: TSchema[];
}

/** The name of the operation's Error schema. */
const errorSchemaName = (operationId: string) => `${operationId.charAt(0).toUpperCase()}${operationId.slice(1)}Error`;

/** What the HTTP layer answers on any operation, whatever its handler does. */
function houseErrors(spec: OperationSpec, config: Config): Codes {
  const seconds = Math.round(config.requestTimeoutMs / 1000);
  return {
    invalid_body: spec.requestBody
      ? 'the body is not valid JSON, or does not match its schema (`detail` lists each problem as `{field, message}`)'
      : 'a body was sent that is not valid JSON or not encoded as its Content-Encoding says',
    ...(spec.path.includes('{') && { invalid_path: 'a path segment is not valid percent-encoded UTF-8' }),
    payload_too_large: `the body is larger than BODY_LIMIT_BYTES (${config.bodyLimitBytes} bytes)`,
    unsupported_media_type: "the body's Content-Encoding or charset is not supported",
    service_unavailable: `PostgreSQL or Redis is unreachable, Stripe (where the operation calls it) did not answer, failed, refused the service's key or rate-limited it (except when asked for a refund, which may then have been made by an earlier try: 409 refund_in_progress), or there was no answer within REQUEST_TIMEOUT_MS (${seconds} s); retry after Retry-After (with the same Idempotency-Key, where the operation takes one)`,
  };
}

const IDEMPOTENCY_ERRORS: Codes = {
  invalid_idempotency_key: `Idempotency-Key is empty, longer than ${MAX_KEY_LENGTH} characters or not visible ASCII`,
  idempotency_request_in_progress: 'a request with this Idempotency-Key is still running; retry shortly',
  idempotency_key_reused: 'this Idempotency-Key was used with another method, path or body',
};

/** A retry runs again rather than wait for the first run: nothing is in progress. */
const { idempotency_request_in_progress: _inProgress, ...REBUILT_IDEMPOTENCY_ERRORS } = IDEMPOTENCY_ERRORS;

/** Every code of the operation, each with its explanation: the operation's own text wins. */
function codesOf(spec: OperationSpec, config: Config, perMinute: number | undefined): Codes {
  return {
    ...houseErrors(spec, config),
    ...spec.access.errors,
    ...(spec.idempotency && (spec.rebuildsAnswers ? REBUILT_IDEMPOTENCY_ERRORS : IDEMPOTENCY_ERRORS)),
    ...(perMinute !== undefined && {
      rate_limited: `more than ${perMinute} requests a minute from this client address; detail.retry_after_seconds and Retry-After say when to retry`,
    }),
    ...spec.errors,
    internal_error: 'an unexpected failure, logged with the request id',
  };
}

const errorDescription = (codes: [ErrorCode, string][]) =>
  codes.map(([code, when]) => `- \`${code}\`: ${when}`).join('\n');

/**
 * The responses of an operation: its successes, one error response per status listing the codes
 * of that status, and `default` for the unexpected; with the codes in the order they appear.
 */
function responsesOf(spec: OperationSpec, codes: [ErrorCode, string][], traits: HeaderTraits) {
  const byStatus = new Map<number, [ErrorCode, string][]>();
  for (const entry of codes) {
    const status = ERROR_STATUSES[entry[0]];
    if (status !== 500) byStatus.set(status, [...(byStatus.get(status) ?? []), entry]);
  }
  const errors = [...byStatus].sort(([a], [b]) => a - b);
  const unexpected = codes.filter(([code]) => ERROR_STATUSES[code] === 500);
  const content = { 'application/json': { schema: ref(errorSchemaName(spec.operationId)) } };

  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(spec.responses)) {
    responses[status] = { ...response, headers: responseHeaders(Number(status), traits) };
  }
  for (const [status, entries] of errors) {
    responses[status] = { description: errorDescription(entries), headers: responseHeaders(status, traits), content };
  }
  responses.default = {
    description: errorDescription(unexpected),
    headers: responseHeaders('default', traits),
    content,
  };
  return { responses, codes: [...errors.flatMap(([, entries]) => entries), ...unexpected].map(([code]) => code) };
}

/** The OpenAPI operation of `spec` and its Error schema (the codes it answers, as an enum). */
export function describeOperation(spec: OperationSpec, tag: string, config: Config) {
  const perMinute = spec.rateLimitPerMinute?.(config);
  const traits: HeaderTraits = { rateLimited: perMinute !== undefined, idempotent: spec.idempotency !== undefined };
  const { responses, codes } = responsesOf(
    spec,
    Object.entries(codesOf(spec, config, perMinute)) as [ErrorCode, string][],
    traits,
  );
  const notes = [
    spec.description,
    perMinute !== undefined &&
      `Rate limited: ${perMinute} requests a minute per client address, shared by every replica (see the RateLimit headers).`,
    spec.strictQuery && 'Query parameters not listed here are refused with 400 invalid_query.',
  ].filter(Boolean);
  const parameters = [
    ...(spec.parameters ?? []),
    ...(spec.idempotency ? [idempotencyKeyParam(spec.idempotency, spec.rebuildsAnswers)] : []),
  ];
  const operation = {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(notes.length > 0 && { description: notes.join('\n\n') }),
    tags: [tag],
    security: spec.access.security,
    ...(parameters.length > 0 && { parameters }),
    ...(spec.rawBody && {
      requestBody: {
        required: true,
        description: spec.rawBody.description,
        content: Object.fromEntries(
          spec.rawBody.mediaTypes.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]),
        ),
      },
    }),
    ...(spec.requestBody && {
      requestBody: {
        required: spec.requestBody.required ?? true,
        ...(spec.requestBody.description && { description: spec.requestBody.description }),
        content: {
          'application/json': { schema: ref(spec.requestBody.schema), example: spec.requestBody.example },
        },
      },
    }),
    responses,
  };
  const errorSchema = {
    allOf: [ref('Error')],
    required: ['error'],
    properties: { error: { enum: codes } },
    description: `The error codes of ${spec.operationId}; each response says which of them it carries.`,
  };
  return { operation, errorSchema: { name: errorSchemaName(spec.operationId), schema: errorSchema } };
}
