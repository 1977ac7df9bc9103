import { DB_TIMEOUT_DEFAULTS } from '@booking/config';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, type Prisma } from './generated/client';
import { createPgPool, type PgPool, type PgPoolOptions } from './pg-pool';

export type PrismaClientOptions = PgPoolOptions;

/**
 * The one place a Prisma client is made. It runs without native engines: the pg driver adapter
 * talks to PostgreSQL and the query compiler is WebAssembly. Given a URL it makes its own pool
 * (see createPgPool for the options); given a pool it runs on that one, so raw hot-path queries
 * share its connections, and the pool's own options apply. Either way `$disconnect()` ends the pool.
 */
export function createPrismaClient(database: string | PgPool, options: PrismaClientOptions = {}) {
  const {
    connectTimeoutMs = DB_TIMEOUT_DEFAULTS.connectTimeoutMs,
    transactionTimeoutMs = DB_TIMEOUT_DEFAULTS.transactionTimeoutMs,
  } = options;
  const pool = typeof database === 'string' ? createPgPool(database, options) : database;
  const adapter = new PrismaPg(pool, { disposeExternalPool: true });
  return new PrismaClient({
    adapter,
    transactionOptions: { maxWait: connectTimeoutMs, timeout: transactionTimeoutMs },
  });
}

export type Db = ReturnType<typeof createPrismaClient>;
/** The client handed to `$transaction` callbacks. */
export type Tx = Prisma.TransactionClient;
