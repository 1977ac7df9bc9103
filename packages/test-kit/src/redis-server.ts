import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from './ports';
import { waitUntil } from './wait';

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
/** Ports tried before giving up. */
const START_ATTEMPTS = 5;

const running = new Set<ChildProcess>();
// Should the test process go away first, take the servers with it.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Whether a server on `port` answers PING right now. */
function answersPing(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
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
}

export async function startRedisServer(): Promise<RedisServer> {
  let port = 0;
  let child: ChildProcess | null = null;

  /** Whether a server came up on `port`: false when it exited first (the port was taken). */
  const startOn = async (): Promise<boolean> => {
    const server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child = server;
    running.add(server);
    server.once('exit', () => running.delete(server));
    const exited = () => server.exitCode !== null || server.signalCode !== null;
    await waitUntil(async () => exited() || (await answersPing(port)), {
      timeoutMs: READY_WITHIN_MS,
      what: `redis-server on port ${port} to answer PING`,
    });
    return !exited();
  };
  const start = async () => {
    if (!(await startOn())) throw new Error(`redis-server could not start again on port ${port}`);
  };
  const kill = async () => {
    const server = child;
    child = null;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGKILL');
    await exited;
  };

  // A port found free can be taken by another process before the server binds it: try another.
  for (let attempt = 1; ; attempt += 1) {
    port = await freePort();
    if (await startOn()) break;
    if (attempt >= START_ATTEMPTS) throw new Error(`redis-server exited ${START_ATTEMPTS} times before answering PING`);
  }
  return { port, url: `redis://127.0.0.1:${port}`, kill, start };
}
