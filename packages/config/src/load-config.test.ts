import { ConfigError, loadConfig } from './load-config';

const STRONG_SECRET = 'a-production-secret-of-at-least-32-characters';

/** The message of the ConfigError that `load` throws; fails the test if it does not throw one. */
function configErrorOf(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected loadConfig to throw a ConfigError');
}

describe('loadConfig', () => {
  it('when nothing is set, then the defaults are the spec values', () => {
    const config = loadConfig({});

    expect(config.holdTtlSeconds).toBe(600); // 10-minute holds
    expect(config.bookingTokenTtlSeconds).toBe(3600); // 1-hour booking_token
    expect(config.rateLimits).toEqual({ holdsPerMinute: 10, bookingsPerMinute: 5, ordersPerMinute: 5 });
    expect(config.orders).toEqual({ payMinutes: 60, posHoldHours: 24, sweepSeconds: 60 });
    expect(config.wallets).toEqual({ fundsExpiryDays: 365, expirySweepSeconds: 3600 });
    expect(config.memberships).toEqual({
      paymentGraceDays: 7,
      memberTokenTtlDays: 400,
      sweepSeconds: 300,
      reconcileSeconds: 3600,
    });
    expect(config.idempotencyTtlSeconds).toBe(600);
    expect(config.trustProxy).toBe(false);
    expect(config.port).toBe(3000);
    expect(config.env).toBe('development');
    expect(config.bodyLimitBytes).toBe(64 * 1024);
    expect(config.tokenSigningSecret.length).toBeGreaterThanOrEqual(32);
    // The spec's webhook limits: 10 s timeout, 6 attempts on its schedule, disable after 20.
    expect(config.webhooks.timeoutMs).toBe(10_000);
    expect(config.webhooks.retryDelaysMs).toEqual([0, 30_000, 300_000, 1_800_000, 14_400_000, 86_400_000]);
    expect(config.webhooks.autoDisableAfter).toBe(20);
    expect(config.webhooks.allowPrivateUrls).toBe(false);
  });

  it('when WEBHOOK_RETRY_DELAYS_MS is set, then its length is the number of attempts', () => {
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '0, 100,200' }).webhooks.retryDelaysMs).toEqual([0, 100, 200]);
    for (const bad of ['', '0,-1', '0,1.5', 'soon']) {
      expect(configErrorOf(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: bad }))).toContain('WEBHOOK_RETRY_DELAYS_MS');
    }
  });

  it('when running in production without WEBHOOK_SECRET_KEY, then it refuses to start', () => {
    expect(configErrorOf(() => loadConfig({ NODE_ENV: 'production', TOKEN_SIGNING_SECRET: STRONG_SECRET }))).toContain(
      'WEBHOOK_SECRET_KEY: must be set in production',
    );
  });

  it('when nothing is set, then every wait on PostgreSQL and Redis is bounded, and a request is answered within 15 s', () => {
    const config = loadConfig({});

    expect(config.dbTimeouts).toEqual({
      connectTimeoutMs: 5_000,
      statementTimeoutMs: 5_000,
      transactionTimeoutMs: 10_000,
    });
    expect(config.redisTimeouts).toEqual({ connectTimeoutMs: 5_000, commandTimeoutMs: 2_000 });
    // A transaction begun at the start of a request gets its full wait and run time before the deadline.
    expect(config.requestTimeoutMs).toBe(config.dbTimeouts.connectTimeoutMs + config.dbTimeouts.transactionTimeoutMs);
  });

  it('when nothing is set, then the lifecycle worker sweeps every minute and answers health checks on 9465', () => {
    const config = loadConfig({});

    expect(config.unpaidBookingSweepSeconds).toBe(60);
    expect(config.unpaidBookingExpirySeconds).toBe(86_400);
    expect(config.workerHealthPort).toBe(9465);
    expect(config.webhooks.sweepIntervalMs).toBe(30_000);
  });

  it('when the background work settings are given, then they override the defaults', () => {
    const config = loadConfig({ UNPAID_BOOKING_SWEEP_SECONDS: '5', WORKER_HEALTH_PORT: '9500' });

    expect(config.unpaidBookingSweepSeconds).toBe(5);
    expect(config.workerHealthPort).toBe(9500);
  });

  it('when REQUEST_TIMEOUT_MS is not above DB_CONNECT_TIMEOUT_MS, then it refuses to start', () => {
    expect(configErrorOf(() => loadConfig({ REQUEST_TIMEOUT_MS: '5000' }))).toContain('REQUEST_TIMEOUT_MS:');
    expect(loadConfig({ REQUEST_TIMEOUT_MS: '3000', DB_CONNECT_TIMEOUT_MS: '1000' }).requestTimeoutMs).toBe(3_000);
  });

  it('when settings are given, then they override the defaults', () => {
    const config = loadConfig({
      PORT: '8080',
      HOLD_TTL_SECONDS: '30',
      RATE_LIMIT_HOLDS_PER_MINUTE: '3',
      RATE_LIMIT_BOOKINGS_PER_MINUTE: '2',
      IDEMPOTENCY_TTL_SECONDS: '1',
      PUBLIC_BASE_URL: 'https://book.example.com/',
      TOKEN_SIGNING_SECRET: STRONG_SECRET,
    });

    expect(config.port).toBe(8080);
    expect(config.holdTtlSeconds).toBe(30);
    expect(config.rateLimits).toEqual({ holdsPerMinute: 3, bookingsPerMinute: 2, ordersPerMinute: 5 });
    expect(config.idempotencyTtlSeconds).toBe(1);
    expect(config.publicBaseUrl).toBe('https://book.example.com');
    expect(config.tokenSigningSecret).toBe(STRONG_SECRET);
  });

  it('when several settings are invalid, then one ConfigError lists every bad name', () => {
    const message = configErrorOf(() =>
      loadConfig({ PORT: 'abc', HOLD_TTL_SECONDS: '0', TRUST_PROXY: 'maybe?!', TOKEN_SIGNING_SECRET: 'short' }),
    );

    for (const name of ['PORT', 'HOLD_TTL_SECONDS', 'TRUST_PROXY', 'TOKEN_SIGNING_SECRET']) {
      expect(message).toContain(`${name}:`);
    }
    expect(message).not.toContain('RATE_LIMIT_HOLDS_PER_MINUTE');
  });

  it.each([
    ['HOLD_TTL_SECONDS', '-5'],
    ['HOLD_TTL_SECONDS', '1.5'],
    ['RATE_LIMIT_HOLDS_PER_MINUTE', '0'],
    ['RATE_LIMIT_BOOKINGS_PER_MINUTE', 'ten'],
    ['IDEMPOTENCY_TTL_SECONDS', ''],
    ['UNPAID_BOOKING_SWEEP_SECONDS', '0'],
    ['WORKER_HEALTH_PORT', 'nine'],
    ['NODE_ENV', 'staging'],
    ['LOG_LEVEL', 'loud'],
    ['REDIS_URL', 'not a url'],
  ])('when %s is %p, then it is a ConfigError naming it', (name, value) => {
    expect(configErrorOf(() => loadConfig({ [name]: value }))).toContain(`${name}:`);
  });

  it('when running in production without TOKEN_SIGNING_SECRET, then it refuses to start', () => {
    expect(configErrorOf(() => loadConfig({ NODE_ENV: 'production' }))).toContain(
      'TOKEN_SIGNING_SECRET: must be set in production',
    );
  });

  it.each(['TOKEN_SIGNING_SECRET', 'WEBHOOK_SECRET_KEY'])(
    "when running in production with docker-compose's placeholder %s, then it refuses to start",
    (name) => {
      const env = { NODE_ENV: 'production', TOKEN_SIGNING_SECRET: STRONG_SECRET, WEBHOOK_SECRET_KEY: STRONG_SECRET };
      const placeholder = { ...env, [name]: 'replace-me-with-a-random-secret-of-32-or-more-characters' };
      expect(configErrorOf(() => loadConfig(placeholder))).toContain(`${name}: must be set in production`);
    },
  );

  it.each(['p#ss', 'p/ss'])(
    'when a URL with the password %p cannot be parsed, then the error names the setting but not the password',
    (password) => {
      const message = configErrorOf(() => loadConfig({ DATABASE_URL: `postgresql://booking:${password}@db/booking` }));
      expect(message).toContain('DATABASE_URL:');
      expect(message).not.toContain(password);
    },
  );

  it('when running in production with a strong TOKEN_SIGNING_SECRET, then it loads', () => {
    const config = loadConfig({
      NODE_ENV: 'production',
      TOKEN_SIGNING_SECRET: STRONG_SECRET,
      WEBHOOK_SECRET_KEY: STRONG_SECRET,
    });
    expect(config.env).toBe('production');
    expect(config.tokenSigningSecret).toBe(STRONG_SECRET);
  });

  it('when TOKEN_SIGNING_SECRET is 31 characters, then it is too short; at 32 it is accepted', () => {
    expect(configErrorOf(() => loadConfig({ TOKEN_SIGNING_SECRET: 'x'.repeat(31) }))).toContain('TOKEN_SIGNING_SECRET');
    expect(loadConfig({ TOKEN_SIGNING_SECRET: 'x'.repeat(32) }).tokenSigningSecret).toHaveLength(32);
  });

  it.each<[string, boolean | number | string]>([
    ['true', true],
    ['false', false],
    ['', false],
    ['1', 1],
    ['2', 2],
    ['loopback', 'loopback'],
    ['loopback, 10.0.0.0/8', 'loopback, 10.0.0.0/8'],
    ['10.0.0.1,fd00::/8', '10.0.0.1,fd00::/8'],
  ])('when TRUST_PROXY is %p, then it parses to %p', (input, expected) => {
    expect(loadConfig({ TRUST_PROXY: input }).trustProxy).toEqual(expected);
  });

  it.each(['maybe?!', 'yes;no', '$(whoami)', 'maybe', '10.0.0.0/8, proxy'])(
    'when TRUST_PROXY is %p, then it is a ConfigError',
    (input) => {
      expect(configErrorOf(() => loadConfig({ TRUST_PROXY: input }))).toContain('TRUST_PROXY:');
    },
  );

  it('when REDIS_CLUSTER_NODES lists seeds, then the service uses a cluster and puts the queue prefix in braces', () => {
    expect(loadConfig({}).redisClusterNodes).toEqual([]);
    expect(loadConfig({}).queuePrefix).toBe('booking');
    const cluster = loadConfig({ REDIS_CLUSTER_NODES: 'redis-0:6379, 10.0.0.2:7000,[::1]:7001' });
    expect(cluster.redisClusterNodes).toEqual([
      { host: 'redis-0', port: 6379 },
      { host: '10.0.0.2', port: 7000 },
      { host: '::1', port: 7001 },
    ]);
    expect(cluster.queuePrefix).toBe('{booking}');
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'redis-0:6379', QUEUE_PREFIX: '{booking}-eu' }).queuePrefix).toBe(
      '{booking}-eu',
    );
    expect(configErrorOf(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis-0' }))).toContain('REDIS_CLUSTER_NODES:');
    expect(configErrorOf(() => loadConfig({ REDIS_CLUSTER_NODES: 'redis-0:70000' }))).toContain('REDIS_CLUSTER_NODES:');
  });
});
