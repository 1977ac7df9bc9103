import { freePort } from './ports';
import { spawnRedis, type RedisProcess } from './redis-process';

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

/** Ports tried before giving up. */
const START_ATTEMPTS = 5;
const ARGS = ['--save', '', '--appendonly', 'no'];

export async function startRedisServer(): Promise<RedisServer> {
  // A port found free can be taken by another test's process before the server binds it: then
  // the server exits at once, and another port is tried.
  let started: { port: number; server: RedisProcess } | undefined;
  for (let attempt = 1; !started; attempt += 1) {
    const port = await freePort();
    const start = await spawnRedis(port, ARGS);
    if ('server' in start) started = { port, server: start.server };
    else if (attempt >= START_ATTEMPTS)
      throw new Error(
        `redis-server exited ${START_ATTEMPTS} times before answering; last it said: ${start.exitedSaying}`,
      );
  }
  const { port } = started;
  let server: RedisProcess | null = started.server;

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
