import type { Metadata } from './fake-stripe-billing-types';

// Reading the form bodies the SDK sends to the billing endpoints, and answering with Stripe's
// errors: Stripe's own where a real request would fail, and a plain 400 for what Stripe accepts but
// the fake does not model, so a test learns at once instead of getting a quietly wrong answer.

export type Form = Record<string, unknown>;

export interface Reply {
  status: number;
  body: unknown;
}

export const ok = (body: unknown): Reply => ({ status: 200, body });

export const isReply = (value: object): value is Reply => 'status' in value && 'body' in value;

export function invalid(message: string, extra: Record<string, unknown> = {}, status = 400): Reply {
  return { status, body: { error: { type: 'invalid_request_error', message, ...extra } } };
}

export const missing = (kind: string, id: unknown, param: string, status = 400) =>
  invalid(`No such ${kind}: '${String(id)}'`, { code: 'resource_missing', param }, status);

export const required = (param: string) =>
  invalid(`Missing required param: ${param}.`, { code: 'parameter_missing', param });

export const unsupported = (what: string) => invalid(`Fake Stripe does not support ${what}`);

export const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export const int = (value: unknown) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN);

export const bool = (value: unknown) => (value === 'true' ? true : value === 'false' ? false : undefined);

/** The SDK sends arrays as `a[0]=x&a[1]=y`, which parseStripeForm reads as `{ 0: x, 1: y }`. */
export const entries = (value: unknown): unknown[] =>
  value && typeof value === 'object'
    ? Object.entries(value)
        .sort(([a], [b]) => Number(a) - Number(b))
        .map(([, entry]) => entry)
    : [];

/** Stripe's metadata update: an empty string clears it all, an empty value removes that key. */
export function metadata(value: unknown, current: Metadata = {}): Metadata {
  if (value === '') return {};
  const next = { ...current };
  for (const [key, entry] of Object.entries((value as Form | undefined) ?? {})) {
    if (entry === '') delete next[key];
    else next[key] = String(entry);
  }
  return next;
}

/** Stripe refuses a parameter it does not know; this fake also refuses those it does not model. */
export function unknownParam(body: Form, allowed: string[]): Reply | undefined {
  const name = Object.keys(body).find((key) => !allowed.includes(key));
  if (name === undefined) return undefined;
  return invalid(`Received unknown parameter: ${name} (fake Stripe takes ${allowed.join(', ') || 'none'})`, {
    code: 'parameter_unknown',
    param: name,
  });
}

/** Runs `answer` on the object a path names, or answers Stripe's 404. */
export function lookup<T>(map: Map<string, T>, kind: string, id: string, answer: (found: T) => Reply): Reply {
  const found = map.get(id);
  return found ? answer(found) : missing(kind, id, 'id', 404);
}

/** An endpoint: the parsed parameters, and the id in its path. */
export type Handler = (body: Form, id: string) => Reply;
