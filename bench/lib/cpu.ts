import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { ROOT } from './env';

/**
 * Where a run's CPU went, from /proc: seconds of CPU by process group, and how busy the machine's
 * cores were. On this 2-core machine PostgreSQL, Redis, the bench (load generator and receiver)
 * and the apps share the cores, so a ratio that falls short is read beside these figures.
 */
export interface CpuUse {
  /** CPU seconds (user + system) over the interval, by group. */
  seconds: Record<string, number>;
  /** Share of all cores' time that was busy over the interval, 0..1. */
  busy: number;
  wallSeconds: number;
}

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

interface Snapshot {
  at: number;
  ticks: Map<number, { group: string; ticks: number }>;
  machine: { busy: number; total: number };
}

/** Groups by process (pid and start time: a pid can be reused). */
const groups = new Map<string, string>();

let beforeRoot: string | null | undefined;

/**
 * The before checkout's root (BENCH_BEFORE_ROOT), as /proc shows a working directory; null
 * without one, and when it names this checkout (whose processes are then all this checkout's).
 * Read when the first app or ceiling process is met, not at import: a bench that takes no before
 * checkout (bench:tracing, bench:soak) must not fail on a path left in the variable.
 */
function beforeCheckoutRoot(): string | null {
  if (beforeRoot === undefined) {
    const root = process.env.BENCH_BEFORE_ROOT;
    try {
      beforeRoot = root ? realpathSync(root) : null;
    } catch {
      beforeRoot = null;
    }
    if (beforeRoot === realpathSync(ROOT)) beforeRoot = null;
  }
  return beforeRoot;
}

/**
 * The group a process counts in: PostgreSQL and Redis by name, this process as "bench" (the load
 * generator and the webhook receiver), the apps and ceilings by the script they run
 * ("api", "dispatcher", "hold-server"...), everything else as "other". An app of the before
 * checkout (started from its root) is "api (before)", "dispatcher (before)": both checkouts' apps
 * are up while either is measured, and the idle one's CPU must not count as the measured one's.
 */
function groupOf(pid: number, command: string, startTime: string): string {
  if (pid === process.pid) return 'bench';
  if (command === 'postgres') return 'postgres';
  if (command.startsWith('redis-server')) return 'redis';
  const key = `${pid}:${startTime}`;
  let group = groups.get(key);
  if (group === undefined) {
    let cmdline = '';
    let cwd = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // gone
    }
    const script = /(?:apps\/(\w+)\/src\/main|bench\/ceilings\/([\w-]+))\.ts/.exec(cmdline);
    group = script ? (script[1] ?? script[2]!) : 'other';
    if (script && cwd === beforeCheckoutRoot()) group += ' (before)';
    groups.set(key, group);
  }
  return group;
}

function processTicks(): Map<number, { group: string; ticks: number }> {
  const out = new Map<number, { group: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    // The command is in parentheses and may hold spaces; the fields after it are space separated.
    const close = stat.lastIndexOf(')');
    const command = stat.slice(stat.indexOf('(') + 1, close);
    const pid = Number(entry);
    const fields = stat.slice(close + 2).split(' ');
    // utime, stime and starttime are fields 14, 15 and 22 of the line: 12, 13 and 20 after the command.
    out.set(pid, { group: groupOf(pid, command, fields[19]!), ticks: Number(fields[11]) + Number(fields[12]) });
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = values.map(Number);
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  // idle and iowait are the 4th and 5th.
  return { busy: total - n[3]! - n[4]!, total };
}

function cpuSnapshot(): Snapshot {
  return { at: Date.now(), ticks: processTicks(), machine: machineTicks() };
}

/**
 * CPU used between two snapshots, by group. A process is counted only for the ticks it used
 * between them; one that exited before `to` is not counted at all, so take `to` before stopping
 * the processes measured.
 */
function cpuBetween(from: Snapshot, to: Snapshot): CpuUse {
  const seconds: Record<string, number> = {};
  for (const [pid, now] of to.ticks) {
    const used = (now.ticks - (from.ticks.get(pid)?.ticks ?? 0)) / TICKS_PER_SECOND;
    if (used > 0) seconds[now.group] = (seconds[now.group] ?? 0) + used;
  }
  const machineTotal = to.machine.total - from.machine.total;
  return {
    seconds,
    busy: machineTotal > 0 ? (to.machine.busy - from.machine.busy) / machineTotal : NaN,
    wallSeconds: (to.at - from.at) / 1000,
  };
}

/** Adds up CPU uses (a side's rounds). */
export function addCpu(uses: CpuUse[]): CpuUse {
  const seconds: Record<string, number> = {};
  let busyWeighted = 0;
  let wall = 0;
  for (const use of uses) {
    for (const [name, s] of Object.entries(use.seconds)) seconds[name] = (seconds[name] ?? 0) + s;
    busyWeighted += use.busy * use.wallSeconds;
    wall += use.wallSeconds;
  }
  return { seconds, busy: wall > 0 ? busyWeighted / wall : NaN, wallSeconds: wall };
}

/**
 * "cores 97% busy; CPU ms per delivery: dispatcher 0.90, postgres 0.61, ..." for a row's note
 * (nothing when there were no items or no time). HAProxy, kernel threads and the rest are "other".
 */
export function describeCpu(use: CpuUse, items: number, unit: string): string {
  if (items === 0 || !Number.isFinite(use.busy)) return '';
  const per = Object.entries(use.seconds)
    .map(([name, s]) => [name, (s * 1000) / items] as const)
    .filter(([, ms]) => ms >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
    .join(', ');
  return `cores ${(use.busy * 100).toFixed(0)}% busy; CPU ms per ${unit}: ${per}`;
}

/**
 * Runs `work`, and what the machine's CPU went to meanwhile, by group (see groupOf): up to the
 * moment `work` calls `end` (its first call), or else until it resolves.
 */
export async function measureCpu<T>(work: (end: () => void) => Promise<T>): Promise<[T, CpuUse]> {
  const from = cpuSnapshot();
  let to: Snapshot | undefined;
  const result = await work(() => {
    to ??= cpuSnapshot();
  });
  return [result, cpuBetween(from, to ?? cpuSnapshot())];
}
