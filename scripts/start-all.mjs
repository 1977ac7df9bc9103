// What `pnpm start` runs after migrations and the seed: the API, the webhook dispatcher and the
// lifecycle worker, side by side, from one command, so a user who clones the repository needs to
// run only one thing. In production run them as separate processes or pods (`pnpm start:api`,
// `pnpm start:dispatcher`, `pnpm start:worker`) so each can be scaled, restarted and
// health-checked on its own.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsx = join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'tsx.cmd' : 'tsx');
if (!existsSync(tsx)) {
  console.error(`start-all: ${tsx} not found; run \`pnpm install\` first`);
  process.exit(1);
}

const services = [
  { name: 'api', entry: 'apps/api/src/main.ts' },
  { name: 'dispatcher', entry: 'apps/dispatcher/src/main.ts' },
  { name: 'worker', entry: 'apps/api/src/jobs/worker-main.ts' },
];

const children = services.map(({ name, entry }) => {
  const child = spawn(tsx, [join(root, entry)], { cwd: root, stdio: 'inherit', env: process.env });
  return { name, child };
});

let exiting = false;

function stopOthers(except, signal) {
  for (const { child } of children) {
    if (child !== except && child.exitCode === null && child.signalCode === null) child.kill(signal);
  }
}

// Ctrl-C in a terminal already reaches the children (same process group); forwarding covers
// `kill <pid>` and container runtimes, which signal only this process. A second delivery of the
// same signal to a child is harmless: its shutdown handler runs once.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    exiting = true;
    stopOthers(undefined, signal);
  });
}

for (const { name, child } of children) {
  child.on('error', (error) => {
    console.error(`start-all: could not start ${name}: ${error.message}`);
    exiting = true;
    stopOthers(child, 'SIGTERM');
    process.exitCode = 1;
  });
  child.on('exit', (code, signal) => {
    if (!exiting) {
      // One service stopped on its own: without it the others are not a working system.
      console.error(`start-all: ${name} exited (${signal ?? `code ${code}`}); stopping the others`);
      exiting = true;
      stopOthers(child, 'SIGTERM');
    }
    // The first child to exit decides the exit code; wait for the others before leaving.
    if (process.exitCode === undefined) process.exitCode = code ?? (signal === 'SIGINT' ? 130 : 143);
    if (children.every(({ child: c }) => c.exitCode !== null || c.signalCode !== null)) process.exit();
  });
}
