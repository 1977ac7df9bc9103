import type { Config } from '@booking/config';
import pg from 'pg';

/** How much longer than PostgreSQL's own statement_timeout the client waits for an answer. */
const QUERY_TIMEOUT_MARGIN_MS = 1_000;

/**
 * The dispatcher's raw pg pool, for the statements every delivery runs (reading it, recording
 * its attempts): the profile put Prisma's client runtime at most of a delivery's CPU, so these
 * run as named prepared statements here while the rest of the dispatcher keeps Prisma. The
 * waits are bounded as Prisma's are (@booking/db): PostgreSQL cancels a long statement, the
 * client gives up a second later, and an idle-in-transaction session is ended by the server.
 */
export function createSqlPool(config: Config): pg.Pool {
  const { connectTimeoutMs, statementTimeoutMs, transactionTimeoutMs } = config.dbTimeouts;
  return new pg.Pool({
    connectionString: config.databaseUrl,
    max: config.dbPoolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
    idle_in_transaction_session_timeout: transactionTimeoutMs,
  });
}
