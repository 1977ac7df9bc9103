import type { Config } from '@booking/config';
import { createPrismaClient, createRedis, type Db, type RedisClient } from '@booking/db';
import { createLogger, type Logger } from '@booking/logging';
import { queueConnection } from '@booking/webhook-queue';
import type Stripe from 'stripe';
import { HoldStore } from '../holds/hold-store';
import { createStripe } from '../payments/stripe-client';

/** What lifecycle jobs run on: the use cases' dependencies, without HTTP. Made once per worker process. */
export interface WorkerDeps {
  config: Config;
  db: Db;
  /** For the use cases' Redis work (holds); fails fast like the API's. */
  redis: RedisClient;
  holds: HoldStore;
  /** Null without STRIPE_SECRET_KEY: jobs that must ask the provider first leave their rows alone. */
  stripe: Stripe | null;
  logger: Logger;
  /** The job queue's connection, which waits for Redis instead of failing, as BullMQ workers need. */
  queueRedis: RedisClient;
}

export function createWorkerDeps(config: Config): WorkerDeps {
  const logger = createLogger(config.logLevel, 'worker');
  const redis = createRedis(config, config.redisTimeouts);
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  const queueRedis = queueConnection(config);
  queueRedis.on('error', (error: Error) => logger.warn({ err: error }, 'queue redis connection error'));
  return {
    config,
    db: createPrismaClient(config.databaseUrl, { poolSize: config.dbPoolSize, ...config.dbTimeouts }),
    redis,
    holds: new HoldStore(redis, config.holdTtlSeconds, logger),
    stripe: createStripe(config),
    logger,
    queueRedis,
  };
}

export async function closeWorkerDeps(deps: WorkerDeps): Promise<void> {
  // QUIT needs an answer; from a Redis that gives none the connection is dropped instead.
  const quit = (redis: RedisClient) => redis.quit().catch(() => redis.disconnect());
  await Promise.allSettled([deps.db.$disconnect(), quit(deps.redis), quit(deps.queueRedis)]);
}
