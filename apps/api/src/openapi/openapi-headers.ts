import { REQUEST_ID } from '../http/request-logger';

/** The response headers the API sets on purpose, as OpenAPI header components. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id: the caller's X-Request-Id when it is 1 to 128 of `[A-Za-z0-9_.-]`, else a fresh uuid. Quote it when reporting a problem.",
    schema: { type: 'string', pattern: REQUEST_ID.source },
  },
  RateLimit: {
    description:
      'What is left of this client address\'s budget on this route (IETF RateLimit header fields, draft 8), e.g. `"holds";r=9;t=42`: r requests remain for t seconds.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'The budget of this route, e.g. `"holds";q=10;w=60`: q requests per w seconds per client address.',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description:
      'Seconds to wait before trying again: on 429, until the budget refills; on 503 `service_unavailable`, 1 (a passing state; back off further if it persists). A 503 of another code (`payments_not_configured`) has none.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Idempotent-Replayed': {
    description: 'Present on an answer given again for a retried Idempotency-Key, not done again.',
    schema: { type: 'string', enum: ['true'] },
  },
};

type HeaderName = keyof typeof RESPONSE_HEADERS;

const headerRef = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

/** What shapes the headers of an operation's responses. */
export interface HeaderTraits {
  rateLimited: boolean;
  idempotent: boolean;
}

/** The headers a response of `status` can carry ('default' is any unexpected failure). */
export function responseHeaders(status: number | 'default', traits: HeaderTraits): Record<string, unknown> {
  const names: HeaderName[] = ['X-Request-Id'];
  if (traits.rateLimited) names.push('RateLimit', 'RateLimit-Policy');
  if ((traits.rateLimited && status === 429) || status === 503) names.push('Retry-After');
  // Answers below 500 are stored for retries and replayed; 5xx answers never are.
  if (traits.idempotent && status !== 'default' && status < 500) names.push('Idempotent-Replayed');
  return Object.fromEntries(names.map((name) => [name, headerRef(name)]));
}
