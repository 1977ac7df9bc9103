import type { Config } from '@booking/config';
import { createPrismaClient, createRedis, type Db, type Redis } from '@booking/db';
import { createDeliveryQueue, queueConnection, type DeliveryQueue } from '@booking/webhook-queue';
import { createLogger, type Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { HoldStore } from './holds/hold-store';
import { createStripe } from './payments/stripe-client';

/** What the routes and use-cases run on; made once per process (or per test app). */
export interface AppDeps {
  config: Config;
  db: Db;
  redis: Redis;
  logger: Logger;
  holds: HoldStore;
  /** Null when payments are not configured. */
  stripe: Stripe | null;
  /** Where test deliveries, redeliveries and resumed deliveries are queued for the dispatcher. */
  deliveryQueue: DeliveryQueue;
  /** The queue's own connection: BullMQ needs one that retries forever, unlike `redis`. */
  queueRedis: Redis;
}

export function createAppDeps(config: Config): AppDeps {
  const logger = createLogger(config.logLevel, 'api');
  const redis = createRedis(config.redisUrl);
  // Requests that need Redis fail with 503 while it is away; without a listener ioredis would
  // also print every failed reconnect as an unhandled error.
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  const queueRedis = queueConnection(config.redisUrl);
  queueRedis.on('error', (error: Error) => logger.warn({ err: error }, 'queue redis connection error'));
  const deliveryQueue = createDeliveryQueue(queueRedis, config.queuePrefix);
  deliveryQueue.on('error', (error: Error) => logger.warn({ err: error }, 'delivery queue error'));
  return {
    config,
    db: createPrismaClient(config.databaseUrl, { poolSize: config.dbPoolSize }),
    redis,
    logger,
    holds: new HoldStore(redis, config.holdTtlSeconds),
    stripe: createStripe(config),
    deliveryQueue,
    queueRedis,
  };
}

export async function closeAppDeps(deps: AppDeps): Promise<void> {
  await deps.deliveryQueue.close();
  await Promise.allSettled([deps.db.$disconnect(), deps.redis.quit(), deps.queueRedis.quit()]);
}
