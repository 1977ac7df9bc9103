import type { EventEmitter } from 'node:events';
import { Counter, Gauge, type Registry } from 'prom-client';

/** An ioredis client (single or cluster): its connection state, and the errors it emits. */
interface RedisClient extends EventEmitter {
  status: string;
}

/**
 * Redis health of a process's connections, by the name given to each: whether it is ready for
 * commands (read on each scrape), and the connection errors it reported (refused or dropped
 * connections, timed-out sockets). Commands failing while Redis is away show as 503 answers of
 * `http_request_duration_seconds` in the API.
 */
export function watchRedis(registry: Registry, connections: Record<string, RedisClient>): void {
  const errors = new Counter({
    name: 'redis_connection_errors_total',
    help: 'Errors a Redis connection reported (refused, reset or timed-out connections)',
    labelNames: ['connection'] as const,
    registers: [registry],
  });
  for (const [name, client] of Object.entries(connections)) {
    // Shown as 0 from the start, so a rate() sees the first error.
    errors.inc({ connection: name }, 0);
    client.on('error', () => errors.inc({ connection: name }));
  }
  new Gauge({
    name: 'redis_connection_up',
    help: "1 while the Redis connection is ready for commands, else 0 (connecting, reconnecting, or not opened yet: the API's opens on first use)",
    labelNames: ['connection'] as const,
    registers: [registry],
    collect() {
      for (const [name, client] of Object.entries(connections))
        this.set({ connection: name }, client.status === 'ready' ? 1 : 0);
    },
  });
}
