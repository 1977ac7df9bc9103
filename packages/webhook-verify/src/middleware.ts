import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  normaliseSecrets,
  normaliseTolerance,
  verifyWebhook,
  WebhookVerificationError,
  type WebhookEnvelope,
} from './verify-webhook';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The verified delivery, set by `webhookMiddleware`. */
      webhook?: WebhookEnvelope;
    }
  }
}

/** Largest body the middleware reads from the request stream itself: 1 MiB. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface WebhookMiddlewareOptions {
  /** The endpoint's signing secret, or during rotation both the current and the previous one. */
  secrets: string | readonly string[];
  /** Allowed clock difference, in milliseconds, in either direction. Default 5 minutes. */
  toleranceMs?: number;
  /** Clock, milliseconds since epoch. Default `Date.now`. */
  now?: () => number;
}

class BodyTooLargeError extends Error {
  constructor() {
    super(`request body exceeds ${MAX_BODY_BYTES} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

function readRawBody(req: Request, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && /^[0-9]+$/.test(declared) && Number(declared) > limit) {
      req.resume(); // discard the body so the connection can be reused
      reject(new BodyTooLargeError());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error) {
        req.resume();
        reject(error);
      } else {
        resolve(Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer | string) => {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      size += buffer.length;
      if (size > limit) finish(new BodyTooLargeError());
      else chunks.push(buffer);
    };
    const onEnd = () => finish(null);
    const onError = (error: Error) => finish(error);
    const onClose = () => finish(new Error('request closed before the body was complete'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** Whether a body parser has already consumed the request stream (so it cannot be read again). */
function streamConsumed(req: Request): boolean {
  return req.readableDidRead || req.readableEnded || (req as { _body?: unknown })._body === true;
}

/**
 * Express middleware that verifies a delivery and sets `req.webhook` to its envelope.
 *
 * The raw body is taken from `req.body` when it is a Buffer (`express.raw({ type: 'application/json' })`
 * ran before) or a string (`express.text()`), otherwise read from the request stream (at most 1 MiB).
 * A JSON parser that already consumed the stream (`express.json()` mounted first) is a set-up error:
 * it is passed to `next(err)` (a 500, so the delivery is retried once the receiver is fixed).
 *
 * A delivery that fails verification gets 400 `{ "error": "invalid_webhook", "detail": <reason> }`
 * (a body over 1 MiB gets 413 with `detail: "body_too_large"`). 400 rather than 401: the request is
 * not missing credentials the sender could add, it is a malformed or forged delivery.
 *
 * The handler after it should deduplicate on `req.webhook.id` (the delivery id), enqueue the work and
 * answer 2xx within 10 seconds; anything else counts as a failed attempt and is retried.
 */
export function webhookMiddleware(options: WebhookMiddlewareOptions): RequestHandler {
  // Validate once, at start-up, so a missing secret fails loudly instead of on the first delivery.
  const secrets = normaliseSecrets(options.secrets);
  const toleranceMs = normaliseTolerance(options.toleranceMs);
  const now = options.now;

  const verify = (req: Request, res: Response, next: NextFunction, rawBody: Buffer | string) => {
    let envelope: WebhookEnvelope;
    try {
      envelope = verifyWebhook({ rawBody, headers: req.headers, secrets, toleranceMs, now });
    } catch (error) {
      if (error instanceof WebhookVerificationError) {
        res.status(400).json({ error: 'invalid_webhook', detail: error.reason });
        return;
      }
      next(error);
      return;
    }
    req.webhook = envelope;
    next();
  };

  return (req, res, next) => {
    const body: unknown = req.body;
    if (Buffer.isBuffer(body) || typeof body === 'string') {
      verify(req, res, next, body);
      return;
    }
    if (streamConsumed(req)) {
      next(
        new Error(
          'webhookMiddleware: the request body was already parsed, so the raw bytes are lost; ' +
            'mount the webhook route before express.json(), or put express.raw({ type: "application/json" }) on it',
        ),
      );
      return;
    }
    readRawBody(req, MAX_BODY_BYTES).then(
      (rawBody) => verify(req, res, next, rawBody),
      (error: unknown) => {
        if (error instanceof BodyTooLargeError) {
          res.status(413).json({ error: 'invalid_webhook', detail: 'body_too_large' });
        } else {
          next(error);
        }
      },
    );
  };
}
