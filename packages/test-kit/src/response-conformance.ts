import { buildOpenApiDocument } from '@booking/api/src/openapi/openapi-document';
import { isUndocumented } from '@booking/api/src/openapi/undocumented-routes';
import { loadConfig } from '@booking/config';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import express, { type Express, type Response } from 'express';
import { countChecked, recordViolation } from './conformance-violations';

// Every answer the app gives in the integration tests is checked against its OpenAPI document:
// the status is one the operation declares (or its `default`), the content type one that
// response declares, the headers the API sets on purpose are declared and well-formed, and a
// JSON body matches its schema. Problems are collected here and fail the test that caused them
// (test/response-conformance-setup.ts), so the document cannot drift from what the API does.

type Json = Record<string, unknown>;
interface ResponseObject {
  content?: Record<string, { schema?: Json }>;
  headers?: Record<string, { $ref?: string }>;
}
interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  /** Path parameters in the template: literal paths win over templated ones, as in OpenAPI. */
  params: number;
  responses: Record<string, ResponseObject>;
}

const DOCUMENT_ID = 'https://booking-service.test/openapi.json';
const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

const document = buildOpenApiDocument(loadConfig(process.env)) as unknown as {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { headers: Record<string, { schema: Json }> };
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
// The whole document as one schema resource, so `#/components/schemas/X` resolves in it.
ajv.addSchema({ ...document, $id: DOCUMENT_ID });

/** The headers the API sets on purpose: any of them in an answer must be declared by it. */
const API_HEADERS = new Map(Object.keys(document.components.headers).map((name) => [name.toLowerCase(), name]));

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Express's matching: case-insensitive, an optional trailing slash, a parameter is one raw segment. */
const OPERATIONS: Operation[] = Object.entries(document.paths)
  .flatMap(([template, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(
          `^${template
            .split(/\{[^}]+\}/)
            .map(escape)
            .join('[^/]+')}/?$`,
          'i',
        ),
        params: (template.match(/\{/g) ?? []).length,
        responses: operation.responses,
      })),
  )
  .sort((a, b) => a.params - b.params);

const pointer = (...parts: string[]) => parts.map((part) => part.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

const validators = new Map<string, ValidateFunction>();
/** A validator for the schema at `path` of the document, compiled once. */
function validatorAt(path: string): ValidateFunction {
  let validate = validators.get(path);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${path}` });
    validators.set(path, validate);
  }
  return validate;
}

const problemsOf = (validate: ValidateFunction) =>
  (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`).join('; ');

/** What is wrong with the declared headers of an answer. */
function headerProblems(response: ResponseObject, headers: Record<string, unknown>): string[] {
  const declared = new Set(Object.keys(response.headers ?? {}).map((name) => name.toLowerCase()));
  const problems: string[] = [];
  for (const [lower, name] of API_HEADERS) {
    const value = headers[lower];
    if (value === undefined) continue;
    if (!declared.has(lower)) {
      problems.push(`header ${name} is not declared`);
      continue;
    }
    const schema = document.components.headers[name]!.schema;
    const typed = schema.type === 'integer' ? Number(value) : String(value);
    const validate = validatorAt(pointer('components', 'headers', name, 'schema'));
    if (!validate(typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${problemsOf(validate)}`);
  }
  return problems;
}

/** What is wrong with the content type and body of an answer to a documented operation. */
function bodyProblems(at: string[], response: ResponseObject, contentType: string, body: Buffer): string[] {
  const content = response.content;
  if (!content) return body.length > 0 ? [`a body where none is declared: ${body.toString('utf8', 0, 200)}`] : [];
  const media = contentType.split(';')[0]!.trim().toLowerCase();
  if (!(media in content))
    return [`content type ${media || '(none)'} is not one of ${Object.keys(content).join(', ')}`];
  if (media !== 'application/json' || !content[media]!.schema) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return [`not JSON: ${body.toString('utf8', 0, 200)}`];
  }
  const validate = validatorAt(pointer(...at, 'content', media, 'schema'));
  return validate(parsed) ? [] : [`body ${problemsOf(validate)}: ${JSON.stringify(parsed).slice(0, 300)}`];
}

/** What is wrong with an answer to a path and method the document has no operation for. */
function undocumentedProblems(status: number, contentType: string, body: Buffer): string[] {
  if (status < 400) return [`${status} for a path and method the document does not have`];
  if (!contentType.startsWith('application/json')) return [`an error of type ${contentType || '(none)'}`];
  const validate = validatorAt(pointer('components', 'schemas', 'Error'));
  try {
    return validate(JSON.parse(body.toString('utf8'))) ? [] : [`not an Error: ${problemsOf(validate)}`];
  } catch {
    return [`not JSON: ${body.toString('utf8', 0, 200)}`];
  }
}

function check(method: string, url: string, res: Response, body: Buffer): void {
  const path = url.split('?')[0]!;
  if (isUndocumented(path)) return;
  countChecked();
  const status = res.statusCode;
  const headers = res.getHeaders();
  const contentType = String(headers['content-type'] ?? '');
  const head = method === 'HEAD' ? 'GET' : method;
  const operation = OPERATIONS.find((candidate) => candidate.method === head && candidate.pattern.test(path));
  let problems: string[];
  if (!operation) {
    problems = undocumentedProblems(status, contentType, body);
  } else {
    const key = String(status) in operation.responses ? String(status) : 'default';
    const response = operation.responses[key];
    if (!response) {
      problems = [`${status} is not declared`];
    } else {
      const at = ['paths', operation.template, operation.method.toLowerCase(), 'responses', key];
      problems = [
        ...(key === 'default' && status < 500 ? [`${status} is not declared (only default)`] : []),
        ...headerProblems(response, headers),
        ...(method === 'HEAD' ? [] : bodyProblems(at, response, contentType, body)),
      ];
    }
  }
  if (problems.length > 0) {
    const name = operation ? `${operation.method} ${operation.template}` : 'no operation';
    recordViolation(`${method} ${url} (${name}) answered ${status}:\n    ${problems.join('\n    ')}`);
  }
}

/**
 * `app` behind a first middleware that keeps what it answers and checks it against the OpenAPI
 * document when it ends (before the client has it, so the test that asked sees the result).
 */
export function withResponseConformance(app: Express): Express {
  const outer = express();
  outer.disable('x-powered-by');
  outer.use((req, res, next) => {
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(
        Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'),
      );
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.write = ((...args: unknown[]) => {
      if (!res.writableEnded) keep(args[0], args[1]);
      return write(...args);
    }) as Response['write'];
    res.end = ((...args: unknown[]) => {
      // A second end (a handler answering after the request deadline did) sends nothing.
      if (!res.writableEnded) {
        keep(args[0], args[1]);
        try {
          check(req.method, req.originalUrl, res, Buffer.concat(chunks));
        } catch (error) {
          recordViolation(`${req.method} ${req.originalUrl}: the check failed: ${String(error)}`);
        }
      }
      return end(...args);
    }) as Response['end'];
    next();
  });
  outer.use(app);
  return outer;
}
