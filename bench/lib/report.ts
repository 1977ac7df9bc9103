import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Checkout } from './checkout';
import { ROOT } from './env';

/** What a goal of issue 12 asks of a row: a ratio to its `against` row, or a p50 ceiling. */
export type Goal = { minRatio: number } | { maxP50Ms: number };

/** The figures of one scenario for one checkout. */
export interface Figures {
  /** Requests (rps) or items (per_s) per second; absent for rows that are a latency only. */
  value?: number;
  p50: number;
  p99: number;
  /** Resident memory of the app processes after the scenario, MB, by process name. */
  rssMb?: Record<string, number>;
  note?: string;
}

export interface Row extends Figures {
  name: string;
  unit: 'rps' | 'per_s' | 'ms';
  /** The row this one's ratio is taken against (a ceiling, or another row of the same checkout). */
  against?: string;
  goal?: Goal;
  /** The same scenario run on BENCH_BEFORE_ROOT's apps. */
  before?: Figures;
}

/**
 * A scenario's rows by checkout. A ceiling row measured side by side with both checkouts' rows is
 * among `after`'s only: both sides' ratios are then taken against it.
 */
export type CheckoutRows = Record<Checkout['label'], Row[]>;

export const noRows = (): CheckoutRows => ({ after: [], before: [] });

/** Adds `more`'s rows after `rows`', checkout by checkout. */
export function appendRows(rows: CheckoutRows, more: CheckoutRows): void {
  rows.after.push(...more.after);
  rows.before.push(...more.before);
}

function ratioOf(row: Row, rows: Row[], side: 'after' | 'before'): number {
  const base = rows.find((r) => r.name === row.against);
  const mine = side === 'after' ? row.value : row.before?.value;
  // A ceiling row measured in the same rounds as both checkouts' rows serves both sides. A row of
  // a checkout's own (the fresh-slot hold cost, a 1-process scale row) carries the before side's
  // own figures: each side compares with its own.
  const theirs = side === 'before' && base?.before ? base.before.value : base?.value;
  return mine === undefined || theirs === undefined ? NaN : mine / theirs;
}

function met(row: Row, ratio: number, figures: Figures): boolean | undefined {
  if (!row.goal) return undefined;
  return 'minRatio' in row.goal ? ratio >= row.goal.minRatio : figures.p50 < row.goal.maxP50Ms;
}

function goalText(goal: Goal | undefined): string {
  if (!goal) return '';
  return 'minRatio' in goal ? `>= ${goal.minRatio}x` : `p50 < ${goal.maxP50Ms} ms`;
}

const round = (n: number | undefined, digits: number) =>
  n === undefined || !Number.isFinite(n) ? null : Number(n.toFixed(digits));
const cell = (n: number | undefined, digits: number) => round(n, digits)?.toFixed(digits) ?? '-';
const rss = (figures: Figures) =>
  figures.rssMb
    ? Object.entries(figures.rssMb)
        .map(([name, mb]) => `${name} ${cell(mb, 0)}`)
        .join(', ')
    : '';

export function printTable(rows: Row[], header: string[]): void {
  const withBefore = rows.some((row) => row.before);
  const lines = [
    ...header,
    '',
    `| scenario | per s | p50 ms | p99 ms | ratio | against | goal | met | RSS MB |${withBefore ? ' before per s | before p50 ms | before ratio | after/before |' : ''}`,
    `|---|---:|---:|---:|---:|---|---|---|---|${withBefore ? '---:|---:|---:|---:|' : ''}`,
  ];
  for (const row of rows) {
    const ratio = ratioOf(row, rows, 'after');
    const ok = met(row, ratio, row);
    let line = `| ${row.name}${row.note ? ` (${row.note})` : ''} | ${cell(row.value, 0)} | ${cell(row.p50, 1)} | ${cell(row.p99, 1)} | ${cell(ratio, 3)} | ${row.against ?? ''} | ${goalText(row.goal)} | ${ok === undefined ? '' : ok ? 'yes' : 'NO'} | ${rss(row)} |`;
    if (withBefore) {
      const b = row.before;
      const versus = row.unit === 'ms' ? (b ? b.p50 / row.p50 : NaN) : b?.value ? row.value! / b.value : NaN;
      line += b
        ? ` ${cell(b.value, 0)} | ${cell(b.p50, 1)} | ${cell(ratioOf(row, rows, 'before'), 3)} | ${cell(versus, 2)} |`
        : ' | | | |';
    }
    lines.push(line);
  }
  console.log(lines.join('\n'));
}

function figuresJson(row: Row, figures: Figures, ratio: number) {
  return {
    ...(row.unit === 'ms' || figures.value === undefined ? {} : { [row.unit]: round(figures.value, 0) }),
    p50_ms: round(figures.p50, 2),
    p99_ms: round(figures.p99, 2),
    ratio: round(ratio, 3),
    ...(figures.rssMb
      ? { rss_mb: Object.fromEntries(Object.entries(figures.rssMb).map(([k, v]) => [k, round(v, 1)])) }
      : {}),
    ...(figures.note ? { note: figures.note } : {}),
  };
}

/** Writes bench/results/`name` (latest.json for a full run): the run and every row, as printed. */
export function writeJson(name: string, rows: Row[], run: Record<string, unknown>): string {
  const commit = (cwd: string) => {
    try {
      return execSync('git rev-parse HEAD', { cwd, encoding: 'utf8' }).trim();
    } catch {
      return null;
    }
  };
  const before = process.env.BENCH_BEFORE_ROOT;
  const json = {
    run: {
      date: new Date().toISOString(),
      commit: commit(ROOT),
      ...(before ? { before_commit: commit(before) } : {}),
      node: process.version,
      cpus: os.cpus().length,
      cpu_model: os.cpus()[0]?.model ?? null,
      ...run,
    },
    scenarios: rows.map((row) => {
      const ratio = ratioOf(row, rows, 'after');
      const beforeRatio = ratioOf(row, rows, 'before');
      return {
        name: row.name,
        ...figuresJson(row, row, ratio),
        against: row.against ?? null,
        ...(row.goal ? { goal: goalText(row.goal), goal_met: met(row, ratio, row) } : {}),
        ...(row.before
          ? {
              before: {
                ...figuresJson(row, row.before, beforeRatio),
                ...(row.goal ? { goal_met: met(row, beforeRatio, row.before) } : {}),
              },
              after_over_before: round(
                row.unit === 'ms' ? row.before.p50 / row.p50 : row.value! / row.before.value!,
                3,
              ),
            }
          : {}),
      };
    }),
  };
  const file = path.join(ROOT, 'bench', 'results', name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  return file;
}
