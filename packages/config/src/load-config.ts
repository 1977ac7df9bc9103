import { isIP } from 'node:net';
import { bool, cleanEnv, makeValidator, port, str, url } from 'envalid';

/** Raised when the environment does not describe a runnable service; lists every bad setting. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const positiveInt = makeValidator<number>((input) => {
  const value = Number(input);
  if (!/^\d+$/.test(String(input).trim()) || !Number.isSafeInteger(value) || value < 1) {
    throw new Error('must be a positive integer');
  }
  return value;
});

const nonNegativeInt = makeValidator<number>((input) => {
  const value = Number(input);
  if (!/^\d+$/.test(String(input).trim()) || !Number.isSafeInteger(value)) {
    throw new Error('must be a whole number (0 or more)');
  }
  return value;
});

/**
 * Express's `trust proxy`: `false` (default, the socket address is the client), `true` (believe
 * every X-Forwarded-For hop), a hop count such as `1`, or a comma list of trusted proxy
 * addresses or subnets such as `loopback, 10.0.0.0/8`.
 */
const trustProxy = makeValidator<boolean | number | string>((input) => {
  const value = String(input).trim();
  if (value === 'true') return true;
  if (value === 'false' || value === '') return false;
  if (/^\d+$/.test(value)) return Number(value);
  const items = value.split(',').map((item) => item.trim());
  const valid = (item: string) => {
    if (['loopback', 'linklocal', 'uniquelocal'].includes(item)) return true;
    const [address = '', prefix] = item.split('/');
    return isIP(address) !== 0 && (prefix === undefined || /^\d{1,3}$/.test(prefix));
  };
  if (items.every(valid)) return value;
  throw new Error('must be true, false, a hop count or a comma list of addresses/subnets');
});

/**
 * Seeds of a Redis Cluster: a comma list of `host:port`. Empty (default): one Redis at REDIS_URL.
 * Any few nodes will do; the client learns the rest of the cluster from them.
 */
const redisClusterNodes = makeValidator<{ host: string; port: number }[]>((input) => {
  const value = String(input).trim();
  if (value === '') return [];
  return value.split(',').map((item) => {
    const match = /^\[?([^\s\]]+?)\]?:(\d{1,5})$/.exec(item.trim());
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65_535) throw new Error('must be a comma list of host:port');
    return { host: match[1]!, port };
  });
});

/** A comma list of non-negative milliseconds, one per attempt; the first is attempt 1's delay. */
const retryDelays = makeValidator<number[]>((input) => {
  const items = String(input)
    .split(',')
    .map((item) => item.trim());
  if (items.length < 1 || items.length > 20 || !items.every((item) => /^\d+$/.test(item))) {
    throw new Error('must be 1 to 20 comma-separated non-negative integers (milliseconds)');
  }
  return items.map(Number);
});

/**
 * Defaults of the PostgreSQL and Redis timeouts, in milliseconds (see DB_* and REDIS_* below).
 * The connection factories apply them too when a caller passes none: the dispatcher, the CLIs,
 * the benches.
 */
export const DB_TIMEOUT_DEFAULTS = { connectTimeoutMs: 5_000, statementTimeoutMs: 5_000, transactionTimeoutMs: 10_000 };
export const REDIS_TIMEOUT_DEFAULTS = { connectTimeoutMs: 5_000, commandTimeoutMs: 2_000 };

const DEV_SIGNING_SECRET = 'dev-only-token-signing-secret-change-me';
const DEV_WEBHOOK_SECRET_KEY = 'dev-only-webhook-secret-encryption-key';
/** The development defaults above and docker-compose.yml's placeholders: anyone can read them. */
const PUBLISHED_SECRET = /dev-only|replace-me/;
/** The user and password of a URL, as quoted in a validation message: up to its last `@`, since a
 * password that breaks the URL may hold `/`, spaces or `@`. */
const URL_CREDENTIALS = /\/\/[^"]*@/g;

const specs = {
  NODE_ENV: str({ choices: ['development', 'test', 'production'], default: 'development' }),
  DATABASE_URL: url({
    default: 'postgresql://postgres@127.0.0.1:5432/booking',
    desc: 'PostgreSQL connection URL; the database is created on start if it is missing',
  }),
  REDIS_URL: url({ default: 'redis://127.0.0.1:6379', desc: 'Redis for holds, idempotency, rate limits, queues' }),
  REDIS_CLUSTER_NODES: redisClusterNodes({
    default: [],
    desc: 'Seeds of a Redis Cluster (host:port, comma-separated); REDIS_URL then gives only the user, password and TLS (rediss:)',
  }),
  PORT: port({ default: 3000, desc: 'HTTP port of the API' }),
  PUBLIC_BASE_URL: url({
    default: 'http://localhost:3000',
    desc: 'Public address of the API, used to build links such as waiver_url',
  }),
  LOG_LEVEL: str({ choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' }),
  HOLD_TTL_SECONDS: positiveInt({ default: 600, desc: 'Lifetime of a seat hold' }),
  BOOKING_TOKEN_TTL_SECONDS: positiveInt({ default: 3600, desc: 'Lifetime of booking_token' }),
  UNPAID_BOOKING_EXPIRY_SECONDS: positiveInt({
    default: 86_400,
    desc: 'Held bookings nobody paid for are cancelled this long after their hold expired',
  }),
  UNPAID_BOOKING_SWEEP_SECONDS: positiveInt({
    default: 60,
    desc: 'How often the lifecycle worker looks for held bookings to cancel, and for booking refunds Stripe never answered about',
  }),
  IDEMPOTENCY_TTL_SECONDS: positiveInt({ default: 600, desc: 'How long an Idempotency-Key response is replayed' }),
  IDEMPOTENCY_IN_FLIGHT_SECONDS: positiveInt({
    default: 60,
    desc: 'How long a retry is told 409 in progress when the first request never answered (its process died)',
  }),
  RATE_LIMIT_HOLDS_PER_MINUTE: positiveInt({ default: 10, desc: 'POST /api/bookings/hold per IP per minute' }),
  RATE_LIMIT_BOOKINGS_PER_MINUTE: positiveInt({ default: 5, desc: 'POST /api/bookings per IP per minute' }),
  RATE_LIMIT_ORDERS_PER_MINUTE: positiveInt({
    default: 5,
    desc: 'POST /api/orders/wallet-topups and /api/orders/memberships together, per IP per minute',
  }),
  ONLINE_ORDER_PAY_MINUTES: positiveInt({
    default: 60,
    desc: 'How long an online order waits for its payment before the lifecycle worker cancels it',
  }),
  WALLET_FUNDS_EXPIRY_DAYS: nonNegativeInt({
    default: 365,
    desc: 'Days after funding that unspent wallet value expires (0: never)',
  }),
  POS_ORDER_HOLD_HOURS: positiveInt({
    default: 24,
    desc: 'Hours an open POS order keeps its wallet and gift card holds before the lifecycle worker voids it',
  }),
  ORDER_SWEEP_SECONDS: positiveInt({
    default: 60,
    desc: 'How often the lifecycle worker cancels unpaid online orders and voids abandoned POS orders',
  }),
  WALLET_EXPIRY_SWEEP_SECONDS: positiveInt({
    default: 3600,
    desc: 'How often the lifecycle worker expires wallet value past its expiry',
  }),
  MEMBERSHIP_PAYMENT_GRACE_DAYS: nonNegativeInt({
    default: 7,
    desc: 'Days a recurring membership stays paused for payment after its last retry failed, before it ends',
  }),
  MEMBER_TOKEN_TTL_DAYS: positiveInt({
    default: 400,
    desc: 'How long a member token (the card or QR a member shows) and a member self-service link stay valid',
  }),
  MEMBERSHIP_SWEEP_SECONDS: positiveInt({
    default: 300,
    desc: 'How often the lifecycle worker expires fixed-term memberships and starts and ends freezes',
  }),
  MEMBERSHIP_RECONCILE_SECONDS: positiveInt({
    default: 3600,
    desc: 'How often the lifecycle worker re-reads stale recurring memberships from Stripe and ends those past their payment grace',
  }),
  TRUST_PROXY: trustProxy({ default: false, desc: 'Express trust proxy: whether X-Forwarded-For is believed' }),
  TOKEN_SIGNING_SECRET: str({
    default: DEV_SIGNING_SECRET,
    desc: 'HMAC key for booking, check-in and waiver tokens; required (32+ characters) in production',
  }),
  STRIPE_SECRET_KEY: str({
    default: '',
    desc: 'Stripe secret key (sk_test_... or sk_live_...); payments answer 503 without it',
  }),
  STRIPE_PUBLISHABLE_KEY: str({
    default: '',
    desc: 'Stripe publishable key handed to the browser with each PaymentIntent',
  }),
  STRIPE_WEBHOOK_SECRET: str({ default: '', desc: 'Signing secret (whsec_...) of the Stripe webhook endpoint' }),
  STRIPE_API_BASE: str({
    default: '',
    desc: 'Another Stripe-compatible API address, e.g. http://127.0.0.1:12111 for a local mock',
  }),
  WEBHOOK_TIMEOUT_MS: positiveInt({ default: 10_000, desc: 'A webhook attempt fails after this long' }),
  WEBHOOK_AUTO_DISABLE_AFTER: positiveInt({
    default: 20,
    desc: 'Consecutive failed attempts that disable an endpoint',
  }),
  WEBHOOK_RETRY_DELAYS_MS: retryDelays({
    default: [0, 30_000, 300_000, 1_800_000, 14_400_000, 86_400_000],
    desc: 'Delay before each attempt, the first being attempt 1; its length is the number of attempts',
  }),
  WEBHOOK_ALLOW_PRIVATE_URLS: bool({
    default: false,
    desc: 'Allow http:// and private, loopback or link-local receivers (development and tests only)',
  }),
  WEBHOOK_SECRET_KEY: str({
    default: DEV_WEBHOOK_SECRET_KEY,
    desc: 'Key that encrypts webhook signing secrets at rest; required (32+ characters) in production',
  }),
  WEBHOOK_CONCURRENCY: positiveInt({ default: 50, desc: 'Deliveries one dispatcher process works on at once' }),
  WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt({
    default: 10,
    desc: 'Requests one dispatcher process has in flight to any one endpoint; its other deliveries wait in the process up to a second, then go back to the queue for their turn',
  }),
  WEBHOOK_RELAY_INTERVAL_MS: positiveInt({
    default: 50,
    desc: 'How often the relay polls the outbox for committed events (an idle relay finds one at most this long after its commit)',
  }),
  WEBHOOK_SWEEP_INTERVAL_MS: positiveInt({
    default: 30_000,
    desc: 'How often the dispatchers re-queue pending deliveries that lost their job (those older than twice this)',
  }),
  QUEUE_DASHBOARD_PASSWORD: str({
    default: '',
    desc: 'Password of the queue dashboard (/api/admin/queues) for whoever runs the service; empty turns it off',
  }),
  QUEUE_PREFIX: str({ default: 'booking', desc: 'Redis key prefix of the BullMQ queues (one per deployment)' }),
  METRICS_PORT: port({ default: 9464, desc: "Port of the dispatcher's Prometheus /metrics" }),
  WORKER_HEALTH_PORT: port({ default: 9465, desc: "Port of the lifecycle worker's /healthz and /metrics" }),
  API_METRICS_PORT: port({
    default: 9466,
    desc: "Port of the API's Prometheus /metrics and /healthz, apart from PORT so the load balancer never exposes it",
  }),
  BODY_LIMIT_BYTES: positiveInt({ default: 64 * 1024, desc: 'Largest accepted request body' }),
  DB_POOL_SIZE: positiveInt({
    default: 10,
    desc: 'PostgreSQL connections per process (a dispatcher opens 2 more, for Prisma)',
  }),
  DB_CONNECT_TIMEOUT_MS: positiveInt({
    default: DB_TIMEOUT_DEFAULTS.connectTimeoutMs,
    desc: 'Longest wait for a PostgreSQL connection (a new one, or a free one of the pool) and for a transaction to begin',
  }),
  DB_STATEMENT_TIMEOUT_MS: positiveInt({
    default: DB_TIMEOUT_DEFAULTS.statementTimeoutMs,
    desc: 'PostgreSQL cancels a statement running longer; the client gives up 1 s later and closes that connection',
  }),
  DB_TRANSACTION_TIMEOUT_MS: positiveInt({
    default: DB_TIMEOUT_DEFAULTS.transactionTimeoutMs,
    desc: 'A transaction still open this long after it began is rolled back (by PostgreSQL too once idle that long)',
  }),
  REDIS_CONNECT_TIMEOUT_MS: positiveInt({
    default: REDIS_TIMEOUT_DEFAULTS.connectTimeoutMs,
    desc: 'Longest wait for a TCP connection to Redis',
  }),
  REDIS_COMMAND_TIMEOUT_MS: positiveInt({
    default: REDIS_TIMEOUT_DEFAULTS.commandTimeoutMs,
    desc: "A request's Redis command not answered this long fails (503) and its connection is made again",
  }),
  REQUEST_TIMEOUT_MS: positiveInt({
    default: 15_000,
    desc: 'A request not answered this long after it arrived gets 503; none of its transactions sends a COMMIT later',
  }),
  SHUTDOWN_GRACE_MS: positiveInt({
    default: 20_000,
    desc: 'Time to finish in-flight work on SIGTERM; above REQUEST_TIMEOUT_MS so every request can end',
  }),
  SHUTDOWN_DRAIN_MS: nonNegativeInt({
    default: 5_000,
    desc: 'After SIGTERM the API fails /readyz but keeps serving this long (0: no drain), so load balancers take it out of rotation before its listener closes',
  }),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt({
    default: 65_000,
    desc: "How long the API keeps an idle client connection open; above the load balancer's idle timeout, so the proxy never reuses a connection the API is closing",
  }),
  SEED_DEMO_TENANT: bool({ default: true, desc: 'pnpm start seeds a demo tenant into an empty database' }),
};

/** Every setting of the service, parsed and checked once at start-up. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  const problems: string[] = [];
  const parsed = cleanEnv(env, specs, {
    reporter: ({ errors }) => {
      for (const [name, error] of Object.entries(errors)) {
        // envalid quotes the value it refused: a URL's credentials must not reach the logs.
        problems.push(`${name}: ${(error?.message ?? 'invalid').replace(URL_CREDENTIALS, '//[redacted]@')}`);
      }
    },
  });
  for (const name of ['TOKEN_SIGNING_SECRET', 'WEBHOOK_SECRET_KEY'] as const) {
    if (env.NODE_ENV === 'production' && PUBLISHED_SECRET.test(parsed[name])) {
      problems.push(`${name}: must be set in production (this value is published with the code)`);
    }
  }
  if (parsed.WEBHOOK_SECRET_KEY.length < 32) {
    problems.push('WEBHOOK_SECRET_KEY: must be at least 32 characters');
  }
  if (parsed.QUEUE_DASHBOARD_PASSWORD !== '' && parsed.QUEUE_DASHBOARD_PASSWORD.length < 16) {
    problems.push('QUEUE_DASHBOARD_PASSWORD: must be at least 16 characters (or empty to turn the dashboard off)');
  }
  if (parsed.TOKEN_SIGNING_SECRET.length < 32) {
    problems.push('TOKEN_SIGNING_SECRET: must be at least 32 characters');
  }
  if (parsed.STRIPE_API_BASE !== '' && !URL.canParse(parsed.STRIPE_API_BASE)) {
    problems.push('STRIPE_API_BASE: must be a URL such as http://127.0.0.1:12111');
  }
  if ((parsed.STRIPE_SECRET_KEY === '') !== (parsed.STRIPE_PUBLISHABLE_KEY === '')) {
    problems.push('STRIPE_SECRET_KEY and STRIPE_PUBLISHABLE_KEY: set both or neither');
  }
  if (parsed.REQUEST_TIMEOUT_MS <= parsed.DB_CONNECT_TIMEOUT_MS) {
    problems.push(
      'REQUEST_TIMEOUT_MS: must be greater than DB_CONNECT_TIMEOUT_MS (a request needs time after its connection)',
    );
  }
  // A key whose request died must stay in flight until that request's work can no longer commit
  // (its deadline, then a delayed COMMIT's idle-in-transaction limit), or a retry could redo it.
  if (parsed.IDEMPOTENCY_IN_FLIGHT_SECONDS * 1000 <= parsed.REQUEST_TIMEOUT_MS + parsed.DB_TRANSACTION_TIMEOUT_MS) {
    problems.push('IDEMPOTENCY_IN_FLIGHT_SECONDS: must be longer than REQUEST_TIMEOUT_MS + DB_TRANSACTION_TIMEOUT_MS');
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid settings:\n  ${problems.join('\n  ')}`);
  }

  return {
    env: parsed.NODE_ENV,
    databaseUrl: parsed.DATABASE_URL,
    redisUrl: parsed.REDIS_URL,
    redisClusterNodes: parsed.REDIS_CLUSTER_NODES,
    port: parsed.PORT,
    publicBaseUrl: parsed.PUBLIC_BASE_URL.replace(/\/+$/, ''),
    logLevel: parsed.LOG_LEVEL,
    holdTtlSeconds: parsed.HOLD_TTL_SECONDS,
    bookingTokenTtlSeconds: parsed.BOOKING_TOKEN_TTL_SECONDS,
    unpaidBookingExpirySeconds: parsed.UNPAID_BOOKING_EXPIRY_SECONDS,
    unpaidBookingSweepSeconds: parsed.UNPAID_BOOKING_SWEEP_SECONDS,
    idempotencyTtlSeconds: parsed.IDEMPOTENCY_TTL_SECONDS,
    idempotencyInFlightSeconds: parsed.IDEMPOTENCY_IN_FLIGHT_SECONDS,
    rateLimits: {
      holdsPerMinute: parsed.RATE_LIMIT_HOLDS_PER_MINUTE,
      bookingsPerMinute: parsed.RATE_LIMIT_BOOKINGS_PER_MINUTE,
      ordersPerMinute: parsed.RATE_LIMIT_ORDERS_PER_MINUTE,
    },
    orders: {
      payMinutes: parsed.ONLINE_ORDER_PAY_MINUTES,
      posHoldHours: parsed.POS_ORDER_HOLD_HOURS,
      sweepSeconds: parsed.ORDER_SWEEP_SECONDS,
    },
    wallets: {
      fundsExpiryDays: parsed.WALLET_FUNDS_EXPIRY_DAYS,
      expirySweepSeconds: parsed.WALLET_EXPIRY_SWEEP_SECONDS,
    },
    memberships: {
      paymentGraceDays: parsed.MEMBERSHIP_PAYMENT_GRACE_DAYS,
      memberTokenTtlDays: parsed.MEMBER_TOKEN_TTL_DAYS,
      sweepSeconds: parsed.MEMBERSHIP_SWEEP_SECONDS,
      reconcileSeconds: parsed.MEMBERSHIP_RECONCILE_SECONDS,
    },
    trustProxy: parsed.TRUST_PROXY,
    tokenSigningSecret: parsed.TOKEN_SIGNING_SECRET,
    stripe: {
      secretKey: parsed.STRIPE_SECRET_KEY,
      publishableKey: parsed.STRIPE_PUBLISHABLE_KEY,
      webhookSecret: parsed.STRIPE_WEBHOOK_SECRET,
      apiBase: parsed.STRIPE_API_BASE,
    },
    webhooks: {
      timeoutMs: parsed.WEBHOOK_TIMEOUT_MS,
      autoDisableAfter: parsed.WEBHOOK_AUTO_DISABLE_AFTER,
      retryDelaysMs: parsed.WEBHOOK_RETRY_DELAYS_MS,
      allowPrivateUrls: parsed.WEBHOOK_ALLOW_PRIVATE_URLS,
      secretKey: parsed.WEBHOOK_SECRET_KEY,
      concurrency: parsed.WEBHOOK_CONCURRENCY,
      endpointConcurrency: parsed.WEBHOOK_ENDPOINT_CONCURRENCY,
      relayIntervalMs: parsed.WEBHOOK_RELAY_INTERVAL_MS,
      sweepIntervalMs: parsed.WEBHOOK_SWEEP_INTERVAL_MS,
    },
    // On a cluster, BullMQ runs multi-key scripts over a queue's keys, which must then share a hash
    // tag: a prefix without one is put in braces, so all queues live on one node.
    queuePrefix:
      parsed.REDIS_CLUSTER_NODES.length > 0 && !/\{[^}]+\}/.test(parsed.QUEUE_PREFIX)
        ? `{${parsed.QUEUE_PREFIX}}`
        : parsed.QUEUE_PREFIX,
    queueDashboardPassword: parsed.QUEUE_DASHBOARD_PASSWORD,
    metricsPort: parsed.METRICS_PORT,
    workerHealthPort: parsed.WORKER_HEALTH_PORT,
    apiMetricsPort: parsed.API_METRICS_PORT,
    bodyLimitBytes: parsed.BODY_LIMIT_BYTES,
    dbPoolSize: parsed.DB_POOL_SIZE,
    dbTimeouts: {
      connectTimeoutMs: parsed.DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: parsed.DB_STATEMENT_TIMEOUT_MS,
      transactionTimeoutMs: parsed.DB_TRANSACTION_TIMEOUT_MS,
    },
    redisTimeouts: {
      connectTimeoutMs: parsed.REDIS_CONNECT_TIMEOUT_MS,
      commandTimeoutMs: parsed.REDIS_COMMAND_TIMEOUT_MS,
    },
    requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: parsed.SHUTDOWN_GRACE_MS,
    shutdownDrainMs: parsed.SHUTDOWN_DRAIN_MS,
    keepAliveTimeoutMs: parsed.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    seedDemoTenant: parsed.SEED_DEMO_TENANT,
  };
}

export type Config = ReturnType<typeof loadConfig>;
