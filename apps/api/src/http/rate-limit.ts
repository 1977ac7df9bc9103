import { AppError } from '@booking/domain';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';

/**
 * A per-IP limit counted in Redis, so every API replica behind the load balancer shares one
 * budget per client. Answers 429 in the spec's Error shape with the IETF RateLimit headers.
 * The client IP is Express's `req.ip`, which believes X-Forwarded-For only as TRUST_PROXY says.
 */
export function perIpRateLimit(redis: Redis, options: { name: string; perMinute: number }) {
  const store = new RedisStore({
    prefix: `rl:${options.name}:`,
    sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply>,
  });
  // The store loads its Lua scripts at once and reloads them on use if that failed; without these
  // handlers a Redis outage at start-up is an unhandled rejection, which ends the process.
  for (const loading of [store.incrementScriptSha, store.getScriptSha]) loading.catch(() => undefined);
  return rateLimit({
    windowMs: 60_000,
    limit: options.perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: options.name,
    store,
    handler: (_req, res, next) => {
      next(new AppError('rate_limited', { retry_after_seconds: Number(res.getHeader('Retry-After')) || 60 }));
    },
  });
}
