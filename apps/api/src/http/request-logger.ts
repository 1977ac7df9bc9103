import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { redactUrl } from './redact-url';

export const REQUEST_ID = /^[\w.-]{1,128}$/;

/**
 * One JSON log line per request, tagged with a request id (the caller's X-Request-Id when it is
 * sane, so a trace can cross the load balancer) that is echoed back in the response.
 */
export function requestLogger(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (req, res) => {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, error) =>
      error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    // Only what helps to debug; never headers, where keys and tokens travel.
    serializers: {
      // Tokens travel in some paths and personal data in some queries: see redactUrl.
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.url),
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
