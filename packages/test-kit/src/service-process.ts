import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { waitUntil } from './wait';
import { lastLinesOf } from './child-output';

const ROOT = path.resolve(__dirname, '../../..');

/** One of the apps (the API, the dispatcher) running as its own OS process, for crash tests. */
export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<string>;
  /** The last lines it printed, for failure messages. */
  output: string[];
  /** SIGKILL: no shutdown handler, no finally blocks, sockets torn down by the kernel. */
  kill(): Promise<void>;
  /** SIGTERM, the graceful shutdown; SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ServiceProcess>();
// Should the test process itself go away, take its children with it.
process.once('exit', () => {
  for (const service of running) service.child.kill('SIGKILL');
});

/**
 * Starts `entry` (a path from the repository root) with `env` on top of this process's
 * environment and waits until `readyUrl` answers 200.
 *
 * It runs node with tsx's loader directly rather than `node_modules/.bin/tsx`: the tsx CLI runs
 * the program in a second node process, and a SIGKILL of the CLI would leave that one running.
 */
export async function startServiceProcess(options: {
  name: string;
  entry: string;
  env: Record<string, string>;
  readyUrl: string;
  readyWithinMs?: number;
}): Promise<ServiceProcess> {
  const { name, readyUrl, readyWithinMs = 60_000 } = options;
  const child = spawn(process.execPath, ['--import', 'tsx', options.entry], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = lastLinesOf(child);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );

  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const handle: ServiceProcess = {
    name,
    child,
    exited,
    output,
    async kill() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
      running.delete(handle);
    },
    async stop(graceMs = 10_000) {
      if (!gone()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(handle);
    },
  };
  running.add(handle);

  try {
    await waitUntil(
      async () => {
        if (gone()) throw new Error(`${name} exited before it was ready:\n${output.join('\n')}`);
        try {
          return (await fetch(readyUrl, { signal: AbortSignal.timeout(1_000) })).status === 200;
        } catch {
          return false; // not listening yet
        }
      },
      { timeoutMs: readyWithinMs, intervalMs: 100, what: () => `${name} to answer ${readyUrl}:\n${output.join('\n')}` },
    );
  } catch (error) {
    await handle.kill();
    throw error;
  }
  return handle;
}

/** SIGKILLs every service process still running: for afterAll, and after a failed test. */
export async function killAllServiceProcesses(): Promise<void> {
  await Promise.all([...running].map((service) => service.kill()));
}
