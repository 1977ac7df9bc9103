import { systemLookupAll, type LookupAll } from '@booking/address-policy';
import type { Config } from '@booking/config';
import { createPgPool, createPrismaClient, createRedis, type Db, type PgPool, type RedisClient } from '@booking/db';
import { jobRunsAt, type JobRunsAt } from '@booking/jobs';
import { createDeliveryQueue, type DeliveryQueue } from '@booking/webhook-queue';
import { createLogger, type Logger } from '@booking/logging';
import type Stripe from 'stripe';
import { BookingTermsCache } from './bookings/booking-terms';
import { createDrain, type Drain } from './health/drain';
import { HoldStore } from './holds/hold-store';
import { refuseStatementPastDeadline, transactionsWithinDeadline } from './http/request-deadline';
import { LIFECYCLE_QUEUE } from './jobs/lifecycle-queue';
import { createStripe } from './payments/stripe-client';

/** What the routes and use-cases run on; made once per process (or per test app). */
export interface AppDeps {
  config: Config;
  db: Db;
  /** The pool `db` runs on, for the few hot statements written as raw SQL (a booking's, the widget read). */
  pool: PgPool;
  redis: RedisClient;
  logger: Logger;
  holds: HoldStore;
  /** The experience, slot and addon terms of recent bookings, so that a booking reads them once. */
  terms: BookingTermsCache;
  /** Null when payments are not configured. */
  stripe: Stripe | null;
  /** Where test deliveries, redeliveries and resumed deliveries are queued for the dispatcher. */
  deliveryQueue: DeliveryQueue;
  /** The queue's own connection, a producer's: like `redis` it fails fast while Redis is away. */
  queueRedis: RedisClient;
  /** Asks the lifecycle worker to run a job at an exact moment (an order's payment window closing). */
  lifecycle: JobRunsAt;
  /** Resolves webhook receiver names at subscription; tests pass one that never queries DNS. */
  lookupHost: LookupAll;
  /** Set on SIGTERM: /readyz fails and connections close while the process drains (main.ts). */
  drain: Drain;
}

export function createAppDeps(config: Config): AppDeps {
  const logger = createLogger(config.logLevel, 'api');
  const redis = createRedis(config, { ...config.redisTimeouts, autoPipelining: true });
  // Requests that need Redis fail with 503 while it is away; without a listener ioredis would
  // also print every failed reconnect as an unhandled error.
  redis.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  const queueRedis = createRedis(config, { ...config.redisTimeouts, lazyConnect: false });
  queueRedis.on('error', (error: Error) => logger.warn({ err: error }, 'queue redis connection error'));
  const deliveryQueue = createDeliveryQueue(queueRedis, config.queuePrefix, { failFast: true });
  deliveryQueue.on('error', (error: Error) => logger.warn({ err: error }, 'delivery queue error'));
  const pool = createPgPool(config.databaseUrl, {
    poolSize: config.dbPoolSize,
    ...config.dbTimeouts,
    refuseStatement: refuseStatementPastDeadline,
  });
  // An idle connection PostgreSQL ends (a restart, a failover) is an 'error' on the pool, which
  // drops it; unheard, the event would kill the process. Prisma's adapter listens only once Prisma
  // has sent a query, and a replica may have served only raw statements (widget reads) by then.
  pool.on('error', (error: Error) => logger.warn({ err: error }, 'postgresql connection error'));
  return {
    config,
    db: transactionsWithinDeadline(createPrismaClient(pool, config.dbTimeouts), config.dbTimeouts),
    pool,
    redis,
    logger,
    holds: new HoldStore(redis, config.holdTtlSeconds, logger),
    terms: new BookingTermsCache(),
    stripe: createStripe(config),
    deliveryQueue,
    queueRedis,
    lifecycle: jobRunsAt({ connection: queueRedis, prefix: config.queuePrefix, queueName: LIFECYCLE_QUEUE }),
    lookupHost: systemLookupAll,
    drain: createDrain(),
  };
}

export async function closeAppDeps(deps: AppDeps): Promise<void> {
  await deps.deliveryQueue.close();
  await deps.lifecycle.close();
  // QUIT needs an answer; from a Redis that gives none the connection is dropped instead, which
  // also stops it reconnecting.
  const quit = (redis: RedisClient) => redis.quit().catch(() => redis.disconnect());
  await Promise.allSettled([closePostgres(deps), quit(deps.redis), quit(deps.queueRedis)]);
}

/** Prisma ends the pool it runs on only if it ever connected; a process that sent only raw statements ends it here. */
async function closePostgres(deps: AppDeps): Promise<void> {
  await deps.db.$disconnect();
  if (!deps.pool.ending) await deps.pool.end();
}
