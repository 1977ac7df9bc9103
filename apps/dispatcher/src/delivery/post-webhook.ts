import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import {
  AddressPolicyError,
  resolveVettedAddresses,
  systemLookupAll,
  type LookupAll,
  type VettedAddress,
} from '@booking/address-policy';
import { pinnedLookup, type ReceiverAgents } from './receiver-agents';

export interface PostWebhookOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Development and tests only: also allows `http:` and private, loopback and link-local addresses. */
  allowPrivateAddresses: boolean;
  /** How much of the response body to keep; default 4096. */
  maxResponseBytes?: number;
  /** Keep-alive agents to reuse connections through; without them each attempt connects afresh. */
  agents?: ReceiverAgents;
  /** How the host name is resolved before the address check; default the system resolver. */
  lookupAll?: LookupAll;
}

export interface AttemptResult {
  /** The receiver answered 2xx. */
  ok: boolean;
  /** Null when no HTTP response arrived. */
  statusCode: number | null;
  durationMs: number;
  /** The first maxResponseBytes of the body as UTF-8; null when no HTTP response arrived. */
  responseBody: string | null;
  /** Why the attempt failed before a usable HTTP status; null when a non-redirect status arrived. */
  error: string | null;
}

export const USER_AGENT = 'booking-service-webhooks/1.0';
const DEFAULT_MAX_RESPONSE_BYTES = 4096;

/**
 * Makes one webhook HTTP attempt. Never throws and never retries: every outcome, including bad
 * input, is an AttemptResult, so the caller can record it and schedule the next attempt.
 */
export async function postWebhook(options: PostWebhookOptions): Promise<AttemptResult> {
  const started = performance.now();
  const result = (fields: Partial<AttemptResult>): AttemptResult => ({
    ok: false,
    statusCode: null,
    responseBody: null,
    error: null,
    ...fields,
    durationMs: Math.round(performance.now() - started),
  });

  let url: URL;
  try {
    url = new URL(options.url);
  } catch (_error) {
    return result({ error: 'invalid url' });
  }
  const schemeError = checkScheme(url.protocol, options.allowPrivateAddresses);
  if (schemeError) return result({ error: schemeError });

  const maxBytes = Math.max(0, options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);

  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    // Set once the status line is in; from then on the status decides the outcome.
    let finishResponse: (() => void) | undefined;

    const settle = (fields: Partial<AttemptResult>, responseComplete = false) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result(fields));
      // Stop talking to the receiver: after a timeout, a redirect or a capped body there is nothing
      // more we want, and an open socket would let a slow receiver hold dispatcher resources. A
      // response read to its end leaves the socket clean, and a keep-alive agent may reuse it.
      if (!responseComplete) request?.destroy();
    };

    // One deadline for the whole attempt (DNS, connect, TLS, response), not per socket phase:
    // a receiver trickling one byte at a time must not stretch an attempt beyond timeoutMs.
    // Once a status has arrived, the receiver has taken the delivery; a body still trickling in
    // at the deadline is cut off but does not turn an accepted delivery into a failed one.
    const timer = setTimeout(() => {
      if (finishResponse) finishResponse();
      else settle({ error: `timeout after ${options.timeoutMs} ms` });
    }, options.timeoutMs);

    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const attempt = (addresses: VettedAddress[], retryStale: boolean) => {
      try {
        request = send(url, options, addresses);
      } catch (error) {
        // e.g. a header value with a newline in it; http.request validates synchronously.
        settle({ error: describeError(error) });
        return;
      }
      const sent = request;
      sent.on('error', (error) => {
        // A pooled socket the receiver closed while idle fails before any answer: the request
        // never reached it, so it goes once more, on another socket of the same vetted addresses.
        if (retryStale && sent.reusedSocket && !finishResponse && !settled && isStaleSocket(error)) {
          attempt(addresses, false);
          return;
        }
        settle({ error: describeError(error) });
      });
      sent.on('response', (response) => {
        const statusCode = response.statusCode ?? 0;
        if (statusCode >= 300 && statusCode < 400) {
          // Following a redirect would bypass the address check (a public host redirecting to
          // 169.254.169.254), and receivers are expected to answer at the registered URL.
          settle({ statusCode, error: `redirect not followed (${statusCode})` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const finish = (responseComplete: boolean) =>
          settle(
            {
              ok: statusCode >= 200 && statusCode < 300,
              statusCode,
              responseBody: Buffer.concat(chunks).toString('utf8'),
            },
            responseComplete,
          );
        finishResponse = () => finish(false);
        response.on('data', (chunk: Buffer) => {
          const room = maxBytes - size;
          chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          size += Math.min(chunk.length, room);
          // The body is only kept for diagnostics, so stop at the cap instead of draining it.
          if (size >= maxBytes) finishResponse?.();
        });
        // A body cut short (reset, or destroyed by us) still has a valid status code.
        response.on('end', () => finish(response.complete));
        response.on('error', () => finishResponse?.());
        response.on('close', () => finishResponse?.());
      });
      sent.end(options.body);
    };

    resolveVettedAddresses(host, options.allowPrivateAddresses, options.lookupAll ?? systemLookupAll)
      .then(
        (addresses) => {
          if (settled) return; // the deadline passed while DNS was still answering
          attempt(addresses, true);
        },
        (error: unknown) => settle({ error: describeError(error) }),
      )
      // Belt and braces for the "never throws" promise: a bug above must not become an unhandled rejection.
      .catch((error: unknown) => settle({ error: describeError(error) }));
  });
}

function checkScheme(protocol: string, allowPrivateAddresses: boolean): string | null {
  if (protocol === 'https:') return null;
  if (protocol === 'http:') return allowPrivateAddresses ? null : 'scheme not allowed: http: (https required)';
  return `scheme not allowed: ${protocol}`;
}

function send(url: URL, options: PostWebhookOptions, addresses: VettedAddress[]): http.ClientRequest {
  const transport = url.protocol === 'https:' ? https : http;
  return transport.request(url, {
    method: 'POST',
    // Ours last, so the request is always described correctly whatever the caller passed.
    headers: {
      ...options.headers,
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'content-length': String(Buffer.byteLength(options.body)),
    },
    // Connect to the addresses we just checked instead of letting the socket resolve the name
    // again: a second lookup could return a different (private) address, i.e. DNS rebinding.
    // The URL keeps the host name, so the Host header and TLS SNI/certificate check still use it.
    lookup: pinnedLookup(addresses),
    // A pooled socket only ever connects to these same vetted addresses (see ReceiverAgents).
    agent: options.agents?.agentFor(url, addresses) ?? false,
  });
}

/** The error of a request on a pooled socket the receiver had already closed. */
function isStaleSocket(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

const ERROR_MESSAGES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'dns lookup failed',
  EAI_AGAIN: 'dns lookup failed',
  EPIPE: 'connection reset',
};

/** Short, stable messages for common failures; they are stored and shown to the tenant. */
function describeError(error: unknown): string {
  if (error instanceof AddressPolicyError) return error.message;
  // With several addresses, Node reports an AggregateError holding one error per address.
  // Duck-typed, not instanceof: errors from Node internals can come from another realm (e.g. jest).
  const aggregated = (error as { errors?: unknown } | null)?.errors;
  const first = (Array.isArray(aggregated) ? aggregated[0] : error) as Partial<NodeJS.ErrnoException> | null;
  const code = first?.code;
  if (code && ERROR_MESSAGES[code]) return ERROR_MESSAGES[code];
  // OpenSSL failures surface as EPROTO with a multi-line library dump as the message.
  if (code === 'EPROTO') return 'tls error: protocol error (is the receiver speaking https?)';
  const message = typeof first?.message === 'string' ? first.message : String(first);
  if (code && /CERT|TLS|SSL|UNABLE_TO_|SIGNATURE/.test(code)) return `tls error: ${message}`;
  return message;
}
