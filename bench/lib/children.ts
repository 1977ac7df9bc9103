import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { imageNodeOptions, sleep } from '@booking/test-kit';

/** A child process of the bench (a server, a worker), with the tail of what it printed. */
export interface Child {
  name: string;
  child: ChildProcess;
  /** Last lines printed (stdout and stderr), for error messages. */
  output: string[];
  /** Lines printed besides `ready` (warnings, errors): reported when the child stops. */
  logLines: number;
  /** The last error the child logged (a pino line of level error or fatal, or a stderr line). */
  lastError?: string;
  /** stdout lines not yet consumed by `nextLine`. */
  pending: string[];
  /** The core it is pinned to, if any. */
  core?: number;
  /** Where an app serves its Prometheus metrics (the API's and the dispatcher's). */
  metricsUrl?: string;
}

const running = new Set<Child>();

/** Whether `taskset` can pin processes here (and the machine has a core for each). */
export const CAN_PIN = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** Each checkout's image NODE_OPTIONS, read from its Dockerfile once per run, not per process. */
const imageOptions = new Map<string, string>();

/**
 * Starts `node --import tsx <args>` in `cwd` (so a checkout's apps run on its own modules, with its
 * image's NODE_OPTIONS), pinned to `core` with taskset when asked and possible. taskset execs, so
 * the pid is node's.
 */
export function spawnNode(
  name: string,
  cwd: string,
  args: string[],
  env: Record<string, string>,
  core?: number,
): Child {
  const argv = [process.execPath, '--import', 'tsx', ...args];
  // The image's (the ceilings, always started from this checkout, get this checkout's, like its
  // apps), then the bench's own (a profiler's, say), then the caller's: the last of a flag wins.
  if (!imageOptions.has(cwd)) imageOptions.set(cwd, imageNodeOptions(cwd));
  const nodeOptions = [imageOptions.get(cwd), process.env.NODE_OPTIONS, env.NODE_OPTIONS].filter(Boolean).join(' ');
  const pinned = core !== undefined && CAN_PIN;
  const child = spawn(pinned ? 'taskset' : argv[0]!, pinned ? ['-c', String(core), ...argv] : argv.slice(1), {
    cwd,
    env: { ...process.env, ...env, NODE_OPTIONS: nodeOptions },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const handle: Child = { name, child, output: [], logLines: 0, pending: [], ...(pinned ? { core } : {}) };
  const keep = (stdout: boolean) => (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n').filter(Boolean)) {
      if (stdout) handle.pending.push(line);
      if (line !== 'ready') handle.logLines += 1;
      if (!stdout || /"level":(50|60)/.test(line)) handle.lastError = line.slice(0, 2000);
      handle.output.push(line.slice(0, 300));
      if (handle.output.length > 5) handle.output.shift();
    }
    // Unread stdout of a chatty child must not grow without bound.
    if (handle.pending.length > 1000) handle.pending.splice(0, handle.pending.length - 1000);
  };
  child.stdout!.on('data', keep(true));
  child.stderr!.on('data', keep(false));
  running.add(handle);
  return handle;
}

function exited(handle: Child): boolean {
  return handle.child.exitCode !== null || handle.child.signalCode !== null;
}

function failure(handle: Child, why: string): Error {
  return new Error(`${handle.name} ${why}:\n${handle.output.join('\n')}`);
}

/** Waits until GET `url` answers 200, within `timeoutMs`; stops the child if it never does. */
export async function untilReady(handle: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited(handle)) throw failure(handle, `exited with ${handle.child.exitCode ?? handle.child.signalCode}`);
    if (Date.now() > deadline) {
      await stopChild(handle);
      throw failure(handle, `was not ready within ${timeoutMs} ms`);
    }
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(150);
  }
}

/** The next stdout line matching `test`, within `timeoutMs`. */
export async function nextLine(handle: Child, test: (line: string) => boolean, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const index = handle.pending.findIndex(test);
    if (index >= 0) return handle.pending.splice(0, index + 1).at(-1)!;
    if (exited(handle)) throw failure(handle, `exited with ${handle.child.exitCode ?? handle.child.signalCode}`);
    if (Date.now() > deadline) throw failure(handle, `printed no expected line within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** SIGTERM, then SIGKILL after 15 s; reports what the child printed. */
export async function stopChild(handle: Child): Promise<void> {
  running.delete(handle);
  if (exited(handle)) return;
  const gone = new Promise<void>((resolve) => handle.child.once('exit', () => resolve()));
  handle.child.kill('SIGTERM');
  const timer = setTimeout(() => handle.child.kill('SIGKILL'), 15_000);
  await gone;
  clearTimeout(timer);
  if (handle.logLines > 0)
    process.stderr.write(
      `  ${handle.name} printed ${handle.logLines} line(s); last: ${handle.output.at(-1)}${handle.lastError ? `\n  last error: ${handle.lastError}` : ''}\n`,
    );
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((handle) => stopChild(handle)));
}

/** Kills every child at once: for a signal or a crash of the bench, when there is no time to wait. */
function killAll(): void {
  for (const handle of running) handle.child.kill('SIGKILL');
}

/** Resident memory of the child in MB (VmRSS), or NaN once it is gone. */
export function rssMb(handle: Child): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${handle.child.pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Runs a bench's `main` as the process's whole life: whatever way it ends (its result, a throw,
 * a signal, an error outside the awaited chain), no child it started is left running.
 */
export function runBench(main: () => Promise<void>, exitCode: () => number = () => 0): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
  process.once('uncaughtException', (error) => {
    console.error(error);
    killAll();
    process.exit(1);
  });
  main().then(
    () => process.exit(exitCode()),
    async (error: unknown) => {
      console.error(error);
      await stopAll();
      process.exit(1);
    },
  );
}
