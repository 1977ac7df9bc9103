import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { closedPort } from './tcp-proxy';

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

const READY_WITHIN_MS = 5_000;

const running = new Set<ChildProcess>();
// Should the test process go away first, take the servers with it.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Resolves once the server on `port` answers PING; fails after READY_WITHIN_MS. */
async function waitForPong(port: number): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  while (Date.now() < deadline) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.setTimeout(500, () => socket.destroy());
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (reply) => {
        socket.destroy();
        resolve(reply.toString().startsWith('+PONG'));
      });
      socket.once('close', () => resolve(false));
      socket.once('error', () => resolve(false));
    });
    if (pong) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server on port ${port} did not answer within ${READY_WITHIN_MS} ms`);
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await closedPort();
  let child: ChildProcess | null = null;

  const start = async () => {
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = server;
    running.add(server);
    server.once('exit', () => running.delete(server));
    await waitForPong(port);
  };
  const kill = async () => {
    const server = child;
    child = null;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
  };

  await start();
  return { port, url: `redis://127.0.0.1:${port}`, kill, start };
}
