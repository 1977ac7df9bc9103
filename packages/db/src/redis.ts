import { REDIS_TIMEOUT_DEFAULTS } from '@booking/config';
import { Cluster, Redis, type RedisOptions as IORedisOptions } from 'ioredis';

/** A single Redis or a Redis Cluster: every user of Redis compiles against both. */
export type RedisClient = Redis | Cluster;

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * Where Redis is: a URL (tests, benches, CLIs), or the service's settings, where a non-empty
 * `redisClusterNodes` (REDIS_CLUSTER_NODES) means a cluster reached through those seeds, and the
 * URL then gives only the user, the password and TLS (`rediss:`) of every node.
 */
export type RedisTarget = string | { redisUrl: string; redisClusterNodes: readonly RedisNode[] };

export interface RedisOptions {
  /**
   * Reconnect attempts a command waits through before it fails. Default 1: while Redis is away a
   * request should fail fast (503) rather than wait through reconnect back-offs. Null: wait for
   * ever, as BullMQ workers need.
   */
  maxRetriesPerRequest?: number | null;
  /** Longest wait for each TCP connection attempt. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * A command not answered this long fails ("Command timed out"), and a connection that has
   * received nothing for this long while a command waits is closed and made again, so a Redis
   * that stopped answering (or vanished without closing the connection) costs a request at most
   * this long. Never for blocking commands, which wait on purpose. Default 2000; null: none, for
   * BullMQ workers, whose blocking commands wait for jobs.
   */
  commandTimeoutMs?: number | null;
  /**
   * Connect on the first command rather than at once. Default true; a BullMQ producer queue's
   * connection passes false, as BullMQ expects a connecting client.
   */
  lazyConnect?: boolean;
  /**
   * Send the commands issued in one event-loop tick in one write (ioredis auto-pipelining; on a
   * cluster, one write per node). Default false. Under load a request's commands (rate limit,
   * idempotency, hold script) and other requests' then share socket writes; the write syscalls
   * were the biggest single cost of a hold in a CPU profile.
   */
  autoPipelining?: boolean;
}

/**
 * On a cluster, how many times a command is sent again after a node closed its connection or
 * answered CLUSTERDOWN, and how long apart: a request fails (503) after about a second and a half
 * of a failover rather than waiting for it to end, and a command caught by a slot moving to a
 * promoted replica follows it.
 */
const CLUSTER_RETRIES = { maxRedirections: 16, retryDelayMs: 100 };

const reconnectDelay = (attempt: number) => Math.min(attempt * 50, 500);

/**
 * The one place a Redis connection is made: fail-fast ones for requests and for queues that only
 * add jobs, and waiting ones for BullMQ workers (`maxRetriesPerRequest: null, commandTimeoutMs:
 * null`, see @booking/webhook-queue's `queueConnection`). `lazyConnect` keeps tests and CLIs from
 * opening sockets they never use; reconnecting keeps going in the background.
 */
export function createRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  const {
    maxRetriesPerRequest = 1,
    connectTimeoutMs = REDIS_TIMEOUT_DEFAULTS.connectTimeoutMs,
    commandTimeoutMs = REDIS_TIMEOUT_DEFAULTS.commandTimeoutMs,
    lazyConnect = true,
    autoPipelining = false,
  } = options;
  const connection: IORedisOptions = {
    maxRetriesPerRequest,
    connectTimeout: connectTimeoutMs,
    ...(commandTimeoutMs === null ? {} : { commandTimeout: commandTimeoutMs, socketTimeout: commandTimeoutMs }),
  };
  const url = typeof target === 'string' ? target : target.redisUrl;
  const nodes = typeof target === 'string' ? [] : target.redisClusterNodes;
  if (nodes.length === 0) {
    return new Redis(url, {
      ...connection,
      lazyConnect,
      enableAutoPipelining: autoPipelining,
      retryStrategy: reconnectDelay,
    });
  }
  const { username, password, protocol } = new URL(url);
  // A fail-fast client must not queue commands while no node can be reached (the queue has no
  // bound in time: they would run long after their request was answered 503), so it connects at
  // once and refuses commands until the cluster is ready.
  const failFast = maxRetriesPerRequest !== null;
  return new Cluster([...nodes], {
    lazyConnect: failFast ? false : lazyConnect,
    enableOfflineQueue: !failFast,
    // Never auto-pipelined: ioredis re-sends a pipeline whose commands met MOVED only when every
    // error is the same, so during a failover commands for healthy masters failed with raw MOVED
    // errors (ioredis issue 2075) where without it they are redirected.
    enableAutoPipelining: false,
    clusterRetryStrategy: reconnectDelay,
    maxRedirections: CLUSTER_RETRIES.maxRedirections,
    retryDelayOnFailover: CLUSTER_RETRIES.retryDelayMs,
    retryDelayOnClusterDown: CLUSTER_RETRIES.retryDelayMs,
    retryDelayOnTryAgain: CLUSTER_RETRIES.retryDelayMs,
    slotsRefreshTimeout: connectTimeoutMs,
    redisOptions: {
      ...connection,
      ...(username ? { username: decodeURIComponent(username) } : {}),
      ...(password ? { password: decodeURIComponent(password) } : {}),
      ...(protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}

export type { Cluster, Redis };

/** A Lua script run on Redis by `redisScript`: its keys, then its arguments. */
export type RedisScript = (keys: string[], args: (string | number)[]) => Promise<unknown>;

/**
 * Registers a script with ioredis, which then runs it by its SHA (EVALSHA) and sends the source
 * only when the server does not know it yet (after a restart or a failover); once per client and
 * name. Each script takes a fixed number of keys: ioredis's auto-pipelining on a cluster routes a
 * script by its first argument, which is then its first key (with a key count given per call it
 * would be the count, and scripts for different nodes would share a pipeline, which ioredis
 * refuses).
 */
export function redisScript(redis: RedisClient, name: string, lua: string, numberOfKeys: number): RedisScript {
  if (!(name in redis)) redis.defineCommand(name, { lua, numberOfKeys });
  const run = (redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>)[name]!;
  return (keys, args) => run.call(redis, ...keys, ...args);
}
