import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { lastLinesOf } from './child-output';
import { waitUntil } from './wait';

/** One redis-server process of a test's own, answering on its port. */
export interface RedisProcess {
  port: number;
  pid: number;
  /** Whether it has exited (or was killed). */
  gone(): boolean;
  /** SIGKILL: no shutdown, no save; resolves once it has exited. */
  kill(): Promise<void>;
}

/** A server that came up, or what one that exited before answering printed last. */
export type RedisStart = { server: RedisProcess } | { exitedSaying: string };

const READY_WITHIN_MS = 5_000;
/** Ports (or port pairs) tried before giving up. */
const START_ATTEMPTS = 5;

const running = new Set<ChildProcess>();
// Should the test process go away first, take the servers with it.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * The `process_id` the server on `port` gives in `INFO server`, or null when nothing answers
 * there (within 500 ms) or what answers is not Redis.
 */
function serverPid(port: number): Promise<number | null> {
  return new Promise<number | null>((resolve) => {
    let reply = '';
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500, () => socket.destroy());
    socket.once('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString();
      const pid = /\r\nprocess_id:(\d+)\r\n/.exec(reply);
      if (pid || reply.length > 64_000) {
        socket.destroy();
        resolve(pid ? Number(pid[1]) : null);
      }
    });
    socket.once('close', () => resolve(null));
    socket.once('error', () => resolve(null));
  });
}

/**
 * Starts `redis-server --port <port> --bind 127.0.0.1 ...args` and waits until it answers on its
 * port as itself: `INFO server` gives its pid, so another test's server that holds the port is
 * never taken for it. Returns what it printed when it exits first, as it does when its port (or
 * its cluster bus port) was taken between the caller finding it free and the server binding it:
 * the caller tries another. Throws when it cannot be spawned at all (no redis-server on the
 * PATH), and, after killing it, with its last output when it neither answers nor exits in time.
 */
export async function spawnRedis(port: number, args: string[]): Promise<RedisStart> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = lastLinesOf(child, 5);
  // 'close' comes once its output is read to the end, which 'exit' does not wait for.
  const closed = new Promise((resolve) => child.once('close', resolve));
  // Not started at all (no redis-server on the PATH): no 'exit' follows.
  let failed: Error | undefined;
  child.once('error', (error) => {
    failed = error;
    running.delete(child);
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const gone = () => failed !== undefined || child.exitCode !== null || child.signalCode !== null;
  const kill = async () => {
    if (gone()) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  try {
    await waitUntil(async () => gone() || (await serverPid(port)) === child.pid, {
      timeoutMs: READY_WITHIN_MS,
      what: () => `redis-server on port ${port} to answer; it printed: ${output.join(' | ') || 'nothing'}`,
    });
  } catch (error) {
    await kill();
    throw error;
  }
  // Another port would not help.
  if (failed) throw new Error(`redis-server could not be started: ${failed.message}`);
  if (gone()) {
    await closed;
    return { exitedSaying: output.join(' | ') || 'nothing' };
  }
  return { server: { port, pid: child.pid!, gone, kill } };
}

/**
 * A server on a port `pickPort` finds free, with `args(port)`. A port found free can be taken by
 * another test's process before the server binds it: the server then exits at once, and another
 * port is tried.
 */
export async function startOnFreePort(
  pickPort: () => Promise<number>,
  args: (port: number) => string[],
): Promise<RedisProcess> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await pickPort();
    const start = await spawnRedis(port, args(port));
    if ('server' in start) return start.server;
    if (attempt >= START_ATTEMPTS)
      throw new Error(
        `redis-server exited ${START_ATTEMPTS} times before answering; last it said: ${start.exitedSaying}`,
      );
  }
}
