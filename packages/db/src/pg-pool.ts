import { AsyncResource } from 'node:async_hooks';
import { DB_TIMEOUT_DEFAULTS } from '@booking/config';
import pg from 'pg';
import { parse } from 'pg-connection-string';

/**
 * How much longer than PostgreSQL's own statement_timeout the client waits for an answer. A live
 * server cancels the statement first (a clean error, the connection stays usable); only a server
 * that does not answer at all reaches the client-side timeout.
 */
const QUERY_TIMEOUT_MARGIN_MS = 1_000;

/** pg's error for a query that reached `query_timeout`; it has no code, only this message. */
const QUERY_READ_TIMEOUT = 'Query read timeout';

/**
 * A pg client that closes its connection when a query times out on the client side. pg leaves
 * such a query on the wire: back in the pool, the connection would read the late reply as the
 * answer to its next query, or keep every later query waiting behind it. Closing it also makes
 * PostgreSQL roll back whatever transaction the connection had open. (`pool.query` already
 * drops a client whose query failed; this covers the clients of transactions.)
 */
function closingClient(refuseStatement: (statement: string) => Error | undefined) {
  return class ClosingClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // Wrapped rather than overridden: pg's query has a dozen overloads and this only watches it.
      const query = this.query.bind(this) as (...args: unknown[]) => unknown;
      this.query = ((...args: unknown[]) => {
        const statement = statementText(args[0]);
        const refused = /^\s*ROLLBACK\b/i.test(statement) ? undefined : refuseStatement(statement);
        if (refused) {
          // Whatever transaction the connection has open ends here, unsent statements and all: a
          // refused COMMIT must not leave it open for the connection's next user (Prisma releases
          // the connection without a ROLLBACK then). Outside a transaction this is a no-op.
          const rolledBack = (query('ROLLBACK') as Promise<unknown>).catch(() => this.end().catch(() => undefined));
          // pg answers a query through its callback when it is given one (as pg-pool does), else
          // through the promise it returns.
          const callback = args[args.length - 1];
          if (typeof callback !== 'function') return rolledBack.then(() => Promise.reject(refused));
          void rolledBack.then(() => (callback as (error: Error) => void)(refused));
          return undefined;
        }
        const result = query(...args);
        if (result instanceof Promise) {
          result.catch((error: unknown) => {
            if ((error as Error | undefined)?.message === QUERY_READ_TIMEOUT) this.end().catch(() => undefined);
          });
        }
        return result;
      }) as pg.Client['query'];
    }
  };
}

/**
 * The SQL of a pg query call's first argument (text or a query config). A ROLLBACK is always let
 * through: refusing it would leave a transaction open on a pooled connection.
 */
function statementText(query: unknown): string {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : '';
}

export interface PgPoolOptions {
  /** PostgreSQL connections in the pool. Default 10. */
  poolSize?: number;
  /**
   * Longest wait for a connection: a new one's connect and login, or a free one of the pool. Also
   * how long a transaction may wait to begin (Prisma's `maxWait`). Default 5000.
   */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL cancels a statement running longer (`statement_timeout`). The client gives up on an
   * answer a second later (pg's `query_timeout`: a server that does not answer cannot enforce its
   * own timeout) and closes that connection. Default 5000.
   */
  statementTimeoutMs?: number;
  /**
   * An interactive transaction still open this long after it began is rolled back and can no
   * longer commit (Prisma's `timeout`). PostgreSQL ends a session left idle in a transaction this
   * long (`idle_in_transaction_session_timeout`), so a stalled or dead process's transaction is
   * rolled back by the server too. Default 10000.
   */
  transactionTimeoutMs?: number;
  /**
   * Asked before every statement; an error it returns is the statement's result, and nothing is
   * sent. The API refuses the statements of a request past its deadline this way, so work its
   * client was told 503 about cannot commit later. Default: never refuses.
   */
  refuseStatement?: (statement: string) => Error | undefined;
}

/**
 * A pool that hands a connection to a callback in its caller's async context. pg-pool calls a
 * waiting caller back from wherever a connection came free: inside another caller's query
 * callback, or the socket events of the request that opened the connection. `refuseStatement`
 * (the request deadline, read from AsyncLocalStorage) would then judge the statement by that
 * other request, and refuse fresh requests' statements for an old one's deadline under load.
 * (A promise-style `connect()` resumes in its caller's context already.)
 */
class CallerContextPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(
    callback: (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): void;
  override connect(callback?: Parameters<pg.Pool['connect']>[0]): Promise<pg.PoolClient> | void {
    if (!callback) return super.connect();
    // runInAsyncScope rather than AsyncResource.bind, whose bound function is built with
    // deprecation wrappers for its `asyncResource` property: about 1% of a booking's CPU.
    const caller = new AsyncResource('pg-pool-connect');
    return super.connect((error, client, done) => caller.runInAsyncScope(callback, undefined, error, client, done));
  }
}

/**
 * The one place a PostgreSQL connection pool is made. Prisma runs on it (its pg driver adapter)
 * and so do the few hot statements written as raw SQL, so both share one set of connections,
 * timeouts and the `refuseStatement` hook. Every wait on PostgreSQL is bounded (see the
 * options), so a server that accepts connections but never answers costs a caller at most a
 * timeout, never a hang.
 */
export function createPgPool(databaseUrl: string, options: PgPoolOptions = {}): PgPool {
  const {
    poolSize = 10,
    connectTimeoutMs = DB_TIMEOUT_DEFAULTS.connectTimeoutMs,
    statementTimeoutMs = DB_TIMEOUT_DEFAULTS.statementTimeoutMs,
    transactionTimeoutMs = DB_TIMEOUT_DEFAULTS.transactionTimeoutMs,
    refuseStatement = () => undefined,
  } = options;
  return new CallerContextPool({
    ...inUtc(databaseUrl),
    max: poolSize,
    Client: closingClient(refuseStatement),
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
    idle_in_transaction_session_timeout: transactionTimeoutMs,
  });
}

/**
 * `databaseUrl` for pg, with every session's TimeZone set to UTC after whatever the URL's `options`
 * (or else PGOPTIONS) set: PostgreSQL takes the last `-c` of a setting, so a server whose default
 * zone is another changes nothing. Prisma's pg adapter sends a Date as a timestamp without its
 * offset and reads a timestamptz's text without its offset: in another zone it would store and
 * read every instant shifted by that zone's offset, and disagree with now() and with the raw
 * statements. A URL's settings override the config's in pg, so the URL's own `options` move into
 * ours; the rest of the URL reaches pg as it was, which reads it as it always did (a URL rebuilt
 * or parsed here would not be: a bare % in a password, `ssl=no-verify`).
 */
function inUtc(databaseUrl: string): { connectionString: string; options: string } {
  const options = [parse(databaseUrl).options || process.env.PGOPTIONS, '-c TimeZone=UTC'].filter(Boolean).join(' ');
  const connectionString = withoutOptions(databaseUrl);
  // Whatever pg would still read as `options` would override the zone: refuse it rather than run
  // in another zone.
  if (parse(connectionString).options !== undefined)
    throw new Error('DATABASE_URL: an options parameter is spelled oddly');
  return { connectionString, options };
}

/**
 * `url` without its `options` query parameters (keys compared as the URL parser reads them), every
 * other character as it was. A socket path (`/dir database`) has no query to drop.
 */
function withoutOptions(url: string): string {
  const query = url.indexOf('?');
  if (query < 0 || url.startsWith('/')) return url;
  const hash = url.indexOf('#', query);
  const end = hash < 0 ? url.length : hash;
  const kept = url
    .slice(query + 1, end)
    .split('&')
    .filter((pair) => new URLSearchParams(pair.replace(/[\t\n\r]/g, '')).keys().next().value !== 'options');
  return `${url.slice(0, query)}${kept.length > 0 ? `?${kept.join('&')}` : ''}${url.slice(end)}`;
}

export type PgPool = pg.Pool;
