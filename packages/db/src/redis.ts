import { Redis } from 'ioredis';

/**
 * The one place a Redis connection is made. `lazyConnect` keeps tests and CLIs from opening
 * sockets they never use; BullMQ workers pass `maxRetriesPerRequest: null` as it requires.
 */
export function createRedis(url: string, options: { maxRetriesPerRequest?: number | null } = {}): Redis {
  return new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: options.maxRetriesPerRequest === undefined ? 3 : options.maxRetriesPerRequest,
  });
}

export type { Redis };
