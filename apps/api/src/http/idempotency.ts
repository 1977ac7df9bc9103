import { createHash } from 'node:crypto';
import { AppError } from '@booking/domain';
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';

type StoredRecord =
  { state: 'in_flight'; fingerprint: string } | { state: 'done'; fingerprint: string; status: number; body: unknown };

// How long a request may run before its key is considered abandoned (the process died).
const IN_FLIGHT_SECONDS = 60;
const MAX_KEY_LENGTH = 255;

function fingerprintOf(req: Request): string {
  const raw = (req as Request & { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
  return createHash('sha256').update(`${req.method} ${req.originalUrl}\n`).update(raw).digest('hex');
}

/**
 * Idempotency-Key, after the IETF draft and Stripe: the first request with a key does the work
 * and its response (status and body) is kept for `ttlSeconds`; a retry with the same key and
 * body gets that response again (with `Idempotent-Replayed: true`) without repeating the work;
 * the same key with another body is 422 `idempotency_key_reused`; a retry while the first is
 * still running is 409 `idempotency_request_in_progress`. 5xx answers are not kept, so the
 * client can retry them. Keys are scoped to the route and the client (its IP, or whatever
 * `clientOf` returns). Without the header the request is simply not deduplicated.
 */
export function idempotent(
  redis: Redis,
  options: { scope: string; ttlSeconds: number; clientOf?: (req: Request) => string },
): RequestHandler {
  return async (req, res, next) => {
    const key = req.get('Idempotency-Key');
    if (key === undefined) return next();
    if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
      throw new AppError(
        'invalid_idempotency_key',
        `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters`,
      );
    }
    const client = options.clientOf?.(req) ?? req.ip ?? 'unknown';
    const redisKey = `idem:${options.scope}:${createHash('sha256').update(`${client}\n${key}`).digest('hex')}`;
    const fingerprint = fingerprintOf(req);

    const claimed = await redis.set(
      redisKey,
      JSON.stringify({ state: 'in_flight', fingerprint }),
      'EX',
      IN_FLIGHT_SECONDS,
      'NX',
    );
    if (claimed !== 'OK') return replay(res, await redis.get(redisKey), fingerprint);

    captureResponse(res, async (status, body) => {
      if (status >= 500) {
        await redis.del(redisKey);
      } else {
        const record: StoredRecord = { state: 'done', fingerprint, status, body };
        await redis.set(redisKey, JSON.stringify(record), 'EX', options.ttlSeconds);
      }
    });
    next();
  };
}

function replay(res: Response, stored: string | null, fingerprint: string): void {
  // Expired between our SET NX and GET: rare, and a conflict is a safe answer to retry.
  if (stored === null) throw new AppError('idempotency_request_in_progress');
  const record = JSON.parse(stored) as StoredRecord;
  if (record.fingerprint !== fingerprint) {
    throw new AppError('idempotency_key_reused', 'this Idempotency-Key was used with a different request');
  }
  if (record.state === 'in_flight') throw new AppError('idempotency_request_in_progress');
  res.setHeader('Idempotent-Replayed', 'true');
  res.status(record.status).json(record.body);
}

/**
 * Holds back the JSON response until it is stored, so a retry that arrives right after the
 * answer always finds it.
 */
function captureResponse(res: Response, store: (status: number, body: unknown) => Promise<void>): void {
  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    store(res.statusCode, body)
      .catch((error: unknown) => res.req.log.warn({ err: error }, 'could not store idempotent response'))
      .finally(() => send(body));
    return res;
  };
}
