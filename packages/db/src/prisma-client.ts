import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient, type Prisma } from './generated/client';

/**
 * The one place a Prisma client is made. It runs without native engines: the pg driver adapter
 * talks to PostgreSQL and the query compiler is WebAssembly.
 */
export function createPrismaClient(databaseUrl: string, options: { poolSize?: number } = {}) {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  return new PrismaClient({ adapter });
}

export type Db = ReturnType<typeof createPrismaClient>;
/** The client handed to `$transaction` callbacks. */
export type Tx = Prisma.TransactionClient;
