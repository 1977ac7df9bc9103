import { randomUUID } from 'node:crypto';
import { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import type { Level, Logger } from 'pino';
import { redactUrl } from './redact-url';

export const REQUEST_ID = /^[\w.-]{1,128}$/;

/** What `req.log` is made from on its first use: the app's logger and the request's description. */
const REQUEST_LOG = Symbol('request log');

interface RequestLog {
  logger: Logger;
  described: () => object;
  child?: Logger;
}

declare module 'node:http' {
  interface IncomingMessage {
    /** The request's logger: its lines carry the request (id, method, redacted url). */
    log: Logger;
    [REQUEST_LOG]?: RequestLog;
  }
}

// One getter on the prototype, rather than one defined on each request: an accessor defined on
// an object gives it a shape of its own, and every property Express and the routes then read or
// set on the request was a slower lookup (with the rate limit's key read without an IPv6 parse,
// 1-5% of a hold's CPU in A/B runs).
Object.defineProperty(IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: IncomingMessage): Logger {
    const made = this[REQUEST_LOG];
    if (!made) throw new Error('req.log is available on requests the request logger has seen');
    return (made.child ??= made.logger.child({ req: made.described() }));
  },
});

/** The 5xx the API answers on purpose: Stripe refused (502), or service_unavailable and the like (503). */
const PLANNED_5XX = new Set([502, 503]);

/**
 * `error` only for a failure nobody planned (500), the line an alert should fire on. A planned
 * 5xx (a backend or Stripe failure behind one is logged at `error` with its stack besides, see
 * the error handler), a refused request and a client that went away before its answer was sent
 * are `warn`: a draining replica's readiness probes, or a load balancer giving up on a slow
 * request, are no incident.
 */
function summaryLevel(status: number, aborted: boolean): Level {
  if (aborted) return 'warn';
  if (status >= 500 && !PLANNED_5XX.has(status)) return 'error';
  return status >= 400 ? 'warn' : 'info';
}

/**
 * One JSON log line per request, tagged with a request id (the caller's X-Request-Id when it is
 * sane, so a trace can cross the load balancer) that is echoed back in the response.
 *
 * Written for the hot paths rather than with pino-http: the request's child logger is made only
 * when something logs through `req.log` (most requests never do), and the summary line is built
 * only when its level is enabled. Under load pino-http's per-request child logger, serialisers
 * and listeners were ~6% of a hold's CPU.
 */
export function requestLogger(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', id);
    // Only what helps to debug; never headers, where keys and tokens travel. Tokens travel in
    // some paths and personal data in some queries: see redactUrl.
    const described = () => ({ id, method: req.method, url: redactUrl(req.originalUrl) });
    req[REQUEST_LOG] = { logger, described };

    res.once('close', () => {
      // Closed before the answer was all sent: the client went away (or the socket failed).
      const aborted = !res.writableFinished;
      const level = summaryLevel(res.statusCode, aborted);
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          req: described(),
          res: { statusCode: res.statusCode },
          ...(typeof res.locals.errorCode === 'string' && { error: res.locals.errorCode }),
          responseTime: Math.round(performance.now() - started),
        },
        aborted ? 'request aborted' : 'request completed',
      );
    });
    next();
  };
}
