import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../../..');

/** A dispatcher running as its own OS process (`node --import tsx apps/dispatcher/src/main.ts`). */
export interface DispatcherProcess {
  name: string;
  child: ChildProcess;
  metricsPort: number;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<string>;
  /** The last lines it printed, for failure messages. */
  output: string[];
  /** SIGKILL: no shutdown handler, no finally blocks, sockets torn down by the kernel. */
  kill(): Promise<void>;
  /** SIGTERM, the graceful shutdown; SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<DispatcherProcess>();
// Should the test process itself go away, take its dispatchers with it.
process.once('exit', () => {
  for (const dispatcher of running) dispatcher.child.kill('SIGKILL');
});

/** A port nothing listens on right now (the port validator refuses 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts a dispatcher process with `env` on top of this process's environment and waits until
 * its /healthz answers (the relay is listening and the worker is created by then).
 *
 * It runs node with tsx's loader directly rather than `node_modules/.bin/tsx`: the tsx CLI runs
 * the program in a second node process, and a SIGKILL of the CLI would leave that one running.
 */
export async function startDispatcherProcess(
  name: string,
  env: Record<string, string>,
  readyWithinMs = 30_000,
): Promise<DispatcherProcess> {
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join('apps', 'dispatcher', 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, METRICS_PORT: String(metricsPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      output.push(line.slice(0, 400));
      if (output.length > 20) output.shift();
    }
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );

  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const processHandle: DispatcherProcess = {
    name,
    child,
    metricsPort,
    exited,
    output,
    async kill() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
      running.delete(processHandle);
    },
    async stop(graceMs = 10_000) {
      if (!gone()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      running.delete(processHandle);
    },
  };
  running.add(processHandle);

  const deadline = Date.now() + readyWithinMs;
  for (;;) {
    if (gone()) {
      running.delete(processHandle);
      throw new Error(`dispatcher ${name} exited before it was ready:\n${output.join('\n')}`);
    }
    if (Date.now() > deadline) {
      await processHandle.kill();
      throw new Error(`dispatcher ${name} was not ready within ${readyWithinMs} ms:\n${output.join('\n')}`);
    }
    try {
      const res = await fetch(`http://127.0.0.1:${metricsPort}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (res.status === 200) return processHandle;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
}

/** SIGKILLs every dispatcher process still running: for afterAll, and after a failed test. */
export async function killAllDispatcherProcesses(): Promise<void> {
  await Promise.all([...running].map((dispatcher) => dispatcher.kill()));
}
