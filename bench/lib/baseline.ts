import { freePort } from '@booking/test-kit';
import { sideLabel, type CheckoutApi } from './api';
import { rssMb, spawnNode, stopChild, untilReady } from './children';
import { ROOT } from './env';
import { figures, measureSideBySide, type Measured, type Run, type Side } from './load';
import { noRows, type CheckoutRows, type Goal, type Row } from './report';

/** Starts a ceiling server (a bench/ceilings script) and waits for `readyPath`. */
export async function startCeiling(name: string, script: string, env: Record<string, string>, readyPath: string) {
  const port = await freePort();
  const child = spawnNode(name, ROOT, [script], { ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await untilReady(child, `${url}${readyPath}`);
  return { url, child };
}

/** The baseline row measured in rounds with `name`'s run: the row that `name`'s ratio is taken against. */
const pairedBaseline = (name: string) => `baseline (paired with ${name})`;

/** Runs `body` with the baseline server (Express 5 + one Redis GET) up, given its URL. */
export async function withBaseline<T>(body: (url: string) => Promise<T>): Promise<T> {
  const baseline = await startCeiling('baseline', 'bench/ceilings/baseline-server.ts', {}, '/');
  try {
    return await body(baseline.url);
  } finally {
    await stopChild(baseline.child);
  }
}

/**
 * `name`'s runs (one side per checkout) measured side by side with the baseline's: their figures,
 * in the order of `sides`, and the baseline row their ratios are taken against.
 */
export async function besideBaseline(baselineUrl: string, name: string, sides: Side[]): Promise<[Row, Measured[]]> {
  const [baseline, ...measured] = await measureSideBySide([
    { label: pairedBaseline(name), run: { urls: [baselineUrl], requests: [{ method: 'GET', path: '/' }] } },
    ...sides,
  ]);
  return [{ name: pairedBaseline(name), unit: 'rps', ...figures(baseline!) }, measured];
}

/** A checkout's run of a scenario, and what its row notes besides the CPU. */
interface AppSide {
  app: CheckoutApi;
  run: Run;
  note?: string;
}

/**
 * `name`'s runs through every checkout's API, measured side by side with the baseline: the
 * baseline row (among after's: both checkouts' ratios are taken against it) and each checkout's
 * row of `name`, with its API's RSS.
 */
export async function apisBesideBaseline(
  baselineUrl: string,
  name: string,
  sides: AppSide[],
  goal?: Goal,
): Promise<CheckoutRows> {
  const [baseline, measured] = await besideBaseline(
    baselineUrl,
    name,
    sides.map(({ app, run }) => ({ label: sideLabel(name, app.checkout), run })),
  );
  const rows = noRows();
  rows.after.push(baseline);
  sides.forEach(({ app, note }, i) =>
    rows[app.checkout.label].push({
      name,
      unit: 'rps',
      against: baseline.name,
      ...(goal ? { goal } : {}),
      ...figures(measured[i]!, note ?? ''),
      rssMb: { api: rssMb(app.api.child) },
    }),
  );
  return rows;
}
