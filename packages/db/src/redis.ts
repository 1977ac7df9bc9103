import { Redis } from 'ioredis';

/**
 * The one place a Redis connection is made. `lazyConnect` keeps tests and CLIs from opening
 * sockets they never use; BullMQ workers pass `maxRetriesPerRequest: null` as it requires.
 */
export function createRedis(url: string, options: { maxRetriesPerRequest?: number | null } = {}): Redis {
  return new Redis(url, {
    lazyConnect: true,
    // While Redis is away a request should fail fast (503) rather than wait through long
    // reconnect back-offs; reconnecting keeps going in the background.
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? 1 : options.maxRetriesPerRequest,
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
  });
}

export type { Redis };
