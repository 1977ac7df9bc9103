import { freePort } from './ports';
import { spawnRedis, startOnFreePort, type RedisProcess } from './redis-process';

/**
 * A redis-server of the test's own on 127.0.0.1, without persistence: killed and started again
 * it comes back empty, as a Redis without AOF or RDB does after a crash. Only this process is
 * ever stopped, by its pid; the machine's shared Redis is never touched.
 */
export interface RedisServer {
  port: number;
  url: string;
  /** SIGKILL: no shutdown, no save. */
  kill(): Promise<void>;
  /** Starts a new, empty server on the same port. */
  start(): Promise<void>;
}

const ARGS = ['--save', '', '--appendonly', 'no'];

export async function startRedisServer(): Promise<RedisServer> {
  let server: RedisProcess | null = await startOnFreePort(freePort, () => ARGS);
  const { port } = server;

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      const current = server;
      server = null;
      await current?.kill();
    },
    async start() {
      const start = await spawnRedis(port, ARGS);
      if (!('server' in start))
        throw new Error(`redis-server could not start again on port ${port}: ${start.exitedSaying}`);
      server = start.server;
    },
  };
}
