import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../../..');
const RELAY_ENTRY = path.join(__dirname, 'relay-process.ts');

export interface LogLine {
  level: number;
  msg: string;
  err?: { message?: string };
}

/**
 * Starts the relay alone as its own OS process (relay-process.ts) under Node's default
 * unhandled-rejection mode, which Jest's test process does not show; `exited` resolves with
 * `exit <code>` or the signal that ended it.
 */
export function startRelayProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--unhandled-rejections=throw', '--import', 'tsx', RELAY_ENTRY], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)),
  );
  return {
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
    stop: () => child.kill('SIGTERM'),
    kill: () => child.kill('SIGKILL'),
    // Whole lines only: the last chunk may have ended mid-line.
    lines: (): LogLine[] =>
      stdout
        .slice(0, stdout.lastIndexOf('\n') + 1)
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogLine),
    output: () => `stdout:\n${stdout.slice(-2_000)}\nstderr:\n${stderr.slice(0, 2_000)}`,
  };
}

export type RelayChild = ReturnType<typeof startRelayProcess>;
