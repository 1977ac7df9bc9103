import { REDIS_TIMEOUT_DEFAULTS } from '@booking/config';
import { Redis } from 'ioredis';

export interface RedisOptions {
  /**
   * Reconnect attempts a command waits through before it fails. Default 1: while Redis is away a
   * request should fail fast (503) rather than wait through reconnect back-offs.
   */
  maxRetriesPerRequest?: number;
  /** Longest wait for each TCP connection attempt. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * A command not answered this long fails ("Command timed out"), and a connection that has
   * received nothing for this long while a command waits is closed and made again, so a Redis
   * that stopped answering (or vanished without closing the connection) costs a request at most
   * this long. Never for blocking commands, which wait on purpose. Default 2000.
   */
  commandTimeoutMs?: number;
  /**
   * Connect on the first command rather than at once. Default true; a BullMQ producer queue's
   * connection passes false, as BullMQ expects a connecting client.
   */
  lazyConnect?: boolean;
  /**
   * Send the commands issued in one event-loop tick in one write (ioredis auto-pipelining).
   * Default false. Under load a request's commands (rate limit, idempotency, hold script) and
   * other requests' then share socket writes; the write syscalls were the biggest single cost
   * of a hold in a CPU profile.
   */
  autoPipelining?: boolean;
}

/**
 * The one place a fail-fast Redis connection is made: for requests, and for the API's queue of
 * webhook deliveries, which only adds jobs (BullMQ workers' connections, which wait forever, are
 * made in @booking/webhook-queue). `lazyConnect` keeps tests and CLIs from opening sockets they
 * never use; reconnecting keeps going in the background.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  const {
    maxRetriesPerRequest = 1,
    connectTimeoutMs = REDIS_TIMEOUT_DEFAULTS.connectTimeoutMs,
    commandTimeoutMs = REDIS_TIMEOUT_DEFAULTS.commandTimeoutMs,
    lazyConnect = true,
    autoPipelining = false,
  } = options;
  return new Redis(url, {
    lazyConnect,
    enableAutoPipelining: autoPipelining,
    maxRetriesPerRequest,
    connectTimeout: connectTimeoutMs,
    commandTimeout: commandTimeoutMs,
    socketTimeout: commandTimeoutMs,
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
  });
}

export type { Redis };
