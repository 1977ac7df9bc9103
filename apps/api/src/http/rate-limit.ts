import { createHash } from 'node:crypto';
import { AppError } from '@booking/domain';
import { rateLimit } from 'express-rate-limit';
import type { Cluster, Redis } from 'ioredis';
import { RedisStore, type RedisReply } from 'rate-limit-redis';
import { countRateLimited } from './counters';

/**
 * A per-IP limit counted in Redis, so every API replica behind the load balancer shares one
 * budget per client. Answers 429 in the spec's Error shape with the IETF RateLimit headers.
 * The client IP is Express's `req.ip`, which believes X-Forwarded-For only as TRUST_PROXY says.
 */
export function perIpRateLimit(redis: Redis | Cluster, options: { name: string; perMinute: number }) {
  const store = new RedisStore({ prefix: `rl:${options.name}:`, sendCommand: scriptsByKey(redis) });
  return rateLimit({
    windowMs: 60_000,
    limit: options.perMinute,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    identifier: options.name,
    store,
    handler: (_req, res, next) => {
      countRateLimited(options.name);
      next(new AppError('rate_limited', { retry_after_seconds: Number(res.getHeader('Retry-After')) || 60 }));
    },
  });
}

/**
 * The store's commands, with its scripts run the way ioredis runs its own: the store's SCRIPT
 * LOAD only notes the source and answers its SHA, and an EVALSHA that Redis answers NOSCRIPT is
 * sent again as EVAL. Each counter is one key, so on a cluster both go to the node of that key;
 * the store's own reload would send SCRIPT LOAD to any node (and retries once), so a node that
 * never saw the script, or a replica just promoted, would fail requests. No command reaches
 * Redis at start-up either, so an outage then is no unhandled rejection.
 */
function scriptsByKey(redis: Redis | Cluster) {
  const sources = new Map<string, string>();
  return async (command: string, ...args: string[]): Promise<RedisReply> => {
    if (command === 'SCRIPT' && args[0] === 'LOAD' && args[1] !== undefined) {
      const sha = createHash('sha1').update(args[1]).digest('hex');
      sources.set(sha, args[1]);
      return sha;
    }
    try {
      return (await redis.call(command, ...args)) as RedisReply;
    } catch (error) {
      const source = command === 'EVALSHA' ? sources.get(args[0]!) : undefined;
      if (source === undefined || !String((error as Error).message).startsWith('NOSCRIPT')) throw error;
      return (await redis.call('EVAL', source, ...args.slice(1))) as RedisReply;
    }
  };
}
