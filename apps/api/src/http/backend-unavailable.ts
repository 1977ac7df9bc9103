/** Error classes of a backend that cannot be reached (Prisma) or did not answer (ioredis, BullMQ). */
const NAMES = new Set(['PrismaClientInitializationError', 'MaxRetriesPerRequestError', 'ConnectionClosedError']);

/**
 * Socket error codes, and Prisma's: database not reachable (P1001), reached but timing out
 * (P1002), operation timed out (P1008), connection closed (P1017), no pooled connection in time
 * (P2024), and a transaction that could not begin in time or ran past its timeout (P2028).
 */
const CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'P1001',
  'P1002',
  'P1008',
  'P1017',
  'P2024',
  'P2028',
]);

/**
 * PostgreSQL's SQLSTATEs for a server that timed a statement out (57014), is shutting down or
 * starting (57P01-57P03), has no connection left (53300), or ended a session left idle in a
 * transaction (25P03); class 08 is any connection failure.
 */
const SQLSTATES = new Set(['57014', '57P01', '57P02', '57P03', '53300', '25P03']);

/**
 * What pg, pg-pool and ioredis raise with no name or code of their own: a query or command that
 * got no answer in time, no connection in time, or a connection that dropped. Matched anywhere in
 * the message, which Prisma may wrap in its own.
 */
const MESSAGES = [
  'Query read timeout',
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Command timed out',
  'Connection is closed',
  "Stream isn't writeable",
  'Socket timeout',
  // ioredis on a Redis Cluster: a failover or a node away outlasted its retries, or no node
  // answered for the map of the cluster.
  'Too many Cluster redirections',
  'CLUSTERDOWN',
  'Failed to refresh slots cache',
  'None of startup nodes is available',
  // No node reachable at all: a fail-fast cluster client refuses rather than queues.
  "Cluster isn't ready",
];

interface BackendError {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  meta?: { driverAdapterError?: { cause?: { originalCode?: unknown } } };
}

/** The SQLSTATE of a PostgreSQL error, raw from pg or wrapped by the Prisma adapter. */
function sqlStateOf(error: BackendError): string {
  const wrapped = error.meta?.driverAdapterError?.cause?.originalCode;
  return String(wrapped ?? error.code ?? '');
}

/** Failures of PostgreSQL or Redis reachability: the caller may retry, nothing is wrong with its request. */
export function isBackendUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as BackendError;
  const sqlState = sqlStateOf(candidate);
  return (
    NAMES.has(String(candidate.name)) ||
    CODES.has(String(candidate.code)) ||
    SQLSTATES.has(sqlState) ||
    /^08[0-9A-Z]{3}$/.test(sqlState) ||
    MESSAGES.some((message) => String(candidate.message).includes(message))
  );
}
