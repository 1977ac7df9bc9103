import type { EventData, RecordedEventName } from '@booking/events/src/payloads';
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header names of a delivery request, lower-cased (lookups are case-insensitive). */
export const WEBHOOK_HEADERS = {
  deliveryId: 'x-service-delivery-id',
  event: 'x-service-event',
  timestamp: 'x-service-timestamp',
  signature: 'x-service-signature',
  signaturePrevious: 'x-service-signature-previous',
} as const;

/** The only signature scheme: `v1,` + 64 lowercase hex characters. */
export const SIGNATURE_PREFIX = 'v1,';

/** Default allowed difference between the delivery timestamp and the receiver's clock: 5 minutes. */
export const DEFAULT_TOLERANCE_MS = 5 * 60 * 1000;

/** A delivery of event `N`: its `data` typed by the same schemas the service records it with. */
export interface WebhookEvent<N extends RecordedEventName = RecordedEventName> {
  /** Delivery id (uuid); equals the X-Service-Delivery-Id header. Deduplicate on it. */
  id: string;
  /** Event name, e.g. `booking.confirmed`; narrows `data` in a `switch`. */
  event: N;
  /** ISO 8601 date-time at which the event was emitted. */
  emitted_at: string;
  /** The event's fields: `event_id`, `schema_version`, `entity_type`, `entity_id` and its own. */
  data: EventData<N>;
  _test?: false;
}

/** A test delivery from the developer settings: only the four common fields, random ids. */
export interface WebhookTestDelivery {
  id: string;
  event: string;
  emitted_at: string;
  data: { event_id: string; schema_version: number; entity_type: string; entity_id: string };
  _test: true;
}

/**
 * The JSON body of every delivery. Check `_test` first; then `switch (envelope.event)` narrows
 * `data` to that event's fields.
 */
export type WebhookEnvelope = { [N in RecordedEventName]: WebhookEvent<N> }[RecordedEventName] | WebhookTestDelivery;

export type WebhookVerificationFailure =
  /** A required header (delivery id, event, timestamp, signature) is absent or empty. */
  | 'missing_header'
  /** X-Service-Timestamp is not all digits. */
  | 'invalid_timestamp'
  /** The timestamp differs from the receiver's clock by more than the tolerance (either direction). */
  | 'timestamp_out_of_tolerance'
  /** A signature header is not `v1,` + exactly 64 lowercase hex characters. */
  | 'invalid_signature_format'
  /** No signature header matches any of the given secrets. */
  | 'signature_mismatch'
  /** The body is not JSON, or not an envelope (`id`, `event`, `emitted_at`, `data`). */
  | 'invalid_body'
  /** X-Service-Delivery-Id differs from the body `id`. */
  | 'delivery_id_mismatch'
  /** X-Service-Event differs from the body `event`. */
  | 'event_mismatch';

export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string = `webhook verification failed: ${reason}`,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export type WebhookHeaders = Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The exact bytes received (a string is taken as UTF-8). Not a re-serialised JSON object. */
  rawBody: Buffer | string;
  /** Request headers; names are matched case-insensitively (Node's `req.headers` works as is). */
  headers: WebhookHeaders;
  /** The endpoint's signing secret, or during rotation both the current and the previous one. */
  secrets: string | readonly string[];
  /** Allowed clock difference, in milliseconds, in either direction. Default 5 minutes. */
  toleranceMs?: number;
  /** Clock, milliseconds since epoch. Default `Date.now`. */
  now?: () => number;
}

const TIMESTAMP_PATTERN = /^[0-9]+$/;
const SIGNATURE_PATTERN = /^v1,[0-9a-f]{64}$/;

function computeMac(secret: string, timestamp: string, rawBody: Buffer | string): Buffer {
  const hmac = createHmac('sha256', secret).update(`${timestamp}.`, 'utf8');
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return hmac.digest();
}

/**
 * Computes the signature header value `v1,<lowercase hex HMAC-SHA256>` over `<timestamp>.<rawBody>`.
 * For tests and tooling (e.g. replaying a stored delivery against your own endpoint); receivers
 * verify with `verifyWebhook`.
 */
export function signWebhook(secret: string, timestampMs: number | string, rawBody: Buffer | string): string {
  assertSecret(secret);
  const timestamp = typeof timestampMs === 'number' ? String(timestampMs) : timestampMs;
  if (
    (typeof timestampMs === 'number' && (!Number.isSafeInteger(timestampMs) || timestampMs < 0)) ||
    !TIMESTAMP_PATTERN.test(timestamp)
  ) {
    throw new TypeError('signWebhook: timestampMs must be a non-negative integer (milliseconds since epoch)');
  }
  return SIGNATURE_PREFIX + computeMac(secret, timestamp, rawBody).toString('hex');
}

function assertSecret(secret: unknown): asserts secret is string {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('webhook secret must be a non-empty string');
  }
}

/** Normalises and checks the `secrets` option; throws TypeError on a programming error. */
export function normaliseSecrets(secrets: string | readonly string[]): string[] {
  const list = typeof secrets === 'string' ? [secrets] : [...secrets];
  if (list.length === 0) throw new TypeError('at least one webhook secret is required');
  list.forEach(assertSecret);
  return list;
}

/** Checks the `toleranceMs` option; throws TypeError on a programming error. */
export function normaliseTolerance(toleranceMs: number | undefined): number {
  if (toleranceMs === undefined) return DEFAULT_TOLERANCE_MS;
  if (typeof toleranceMs !== 'number' || !Number.isFinite(toleranceMs) || toleranceMs < 0) {
    throw new TypeError('toleranceMs must be a finite, non-negative number of milliseconds');
  }
  return toleranceMs;
}

/**
 * Case-insensitive header lookup. An empty value counts as absent; a repeated header (array) is
 * joined with ", " as Node does for unknown headers, which then fails the format checks.
 */
function header(headers: WebhookHeaders, name: string): string | undefined {
  let value: string | string[] | undefined = headers[name];
  if (value === undefined) {
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === name) {
        value = headers[key];
        break;
      }
    }
  }
  if (Array.isArray(value)) value = value.join(', ');
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function requireHeader(headers: WebhookHeaders, name: string): string {
  const value = header(headers, name);
  if (value === undefined) throw new WebhookVerificationError('missing_header', `missing header ${name}`);
  return value;
}

/** Constant-time equality; unequal lengths return false instead of throwing. */
function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseEnvelope(rawBody: Buffer | string): WebhookEnvelope {
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('invalid_body', 'body is not JSON');
  }
  if (
    !isPlainObject(parsed) ||
    typeof parsed.id !== 'string' ||
    parsed.id.length === 0 ||
    typeof parsed.event !== 'string' ||
    typeof parsed.emitted_at !== 'string' ||
    !isPlainObject(parsed.data) ||
    (parsed._test !== undefined && typeof parsed._test !== 'boolean')
  ) {
    throw new WebhookVerificationError('invalid_body', 'body is not a webhook envelope');
  }
  return parsed as unknown as WebhookEnvelope;
}

/**
 * Verifies a delivery and returns its envelope, or throws `WebhookVerificationError`.
 *
 * Order of checks: required headers, timestamp format, signature format, signature (X-Service-Signature
 * or X-Service-Signature-Previous against every secret, constant-time), timestamp tolerance, body,
 * header/body agreement. The tolerance is checked after the signature, so `timestamp_out_of_tolerance`
 * means a genuine delivery that is stale (a replay) or a clock that is off.
 */
export function verifyWebhook(options: VerifyWebhookOptions): WebhookEnvelope {
  const secrets = normaliseSecrets(options.secrets);
  const toleranceMs = normaliseTolerance(options.toleranceMs);
  const { headers, rawBody } = options;
  if (typeof rawBody !== 'string' && !Buffer.isBuffer(rawBody)) {
    throw new TypeError('rawBody must be the raw request body as a Buffer or string');
  }

  const deliveryId = requireHeader(headers, WEBHOOK_HEADERS.deliveryId);
  const event = requireHeader(headers, WEBHOOK_HEADERS.event);
  const timestamp = requireHeader(headers, WEBHOOK_HEADERS.timestamp);
  const signature = requireHeader(headers, WEBHOOK_HEADERS.signature);
  const signaturePrevious = header(headers, WEBHOOK_HEADERS.signaturePrevious);

  if (!TIMESTAMP_PATTERN.test(timestamp)) {
    throw new WebhookVerificationError('invalid_timestamp', 'X-Service-Timestamp must be all digits');
  }
  const given = [signature, ...(signaturePrevious === undefined ? [] : [signaturePrevious])];
  if (!given.every((value) => SIGNATURE_PATTERN.test(value))) {
    throw new WebhookVerificationError(
      'invalid_signature_format',
      'signature must be "v1," followed by 64 lowercase hex characters',
    );
  }

  const givenMacs = given.map((value) => Buffer.from(value.slice(SIGNATURE_PREFIX.length), 'hex'));
  let matched = false;
  // Every combination is compared, without stopping early, so timing says nothing about which matched.
  for (const secret of secrets) {
    const expected = computeMac(secret, timestamp, rawBody);
    for (const mac of givenMacs) {
      if (safeEqual(mac, expected)) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('signature_mismatch', 'no signature matches the given secrets');

  const now = (options.now ?? Date.now)();
  if (Math.abs(now - Number(timestamp)) > toleranceMs) {
    throw new WebhookVerificationError(
      'timestamp_out_of_tolerance',
      `X-Service-Timestamp is more than ${toleranceMs} ms from the current time`,
    );
  }

  const envelope = parseEnvelope(rawBody);
  if (envelope.id !== deliveryId) {
    throw new WebhookVerificationError('delivery_id_mismatch', 'X-Service-Delivery-Id differs from the body id');
  }
  if (envelope.event !== event) {
    throw new WebhookVerificationError('event_mismatch', 'X-Service-Event differs from the body event');
  }
  return envelope;
}
