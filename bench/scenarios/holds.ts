import { randomUUID } from 'node:crypto';
import { holdRequests, pileUpHolds, type Api } from '../lib/api';
import type { Target } from '../lib/catalogue';
import { rssMb, spawnNode, stopChild, untilReady } from '../lib/children';
import { freePort } from '@booking/test-kit';
import { ROOT } from '../lib/env';
import { figures, measure } from '../lib/load';
import type { Row } from '../lib/report';

export const MANY_SLOTS = 200;
/** Live holds piled on the hot slot before it is measured (issue 12, goal 1). */
const HOT_PILE = 10_000;
/** Live holds on the slot whose hold cost is compared with an empty one's. */
const DEEP_PILE = 50_000;
/** A pile stops here whatever its count; the row then says how many were placed. */
const PILE_TIME_LIMIT_MS = 90_000;
/** Holds placed to measure one hold's cost, at a low concurrency, on the empty and on the deep slot. */
const COST_REQUESTS = 1_000;
const COST_CONNECTIONS = 10;

const BASELINE = 'baseline: Express 5 + one Redis GET';
const HOLD_CEILING = `hold ceiling: Express + rate limit + SET NX + O(1) script, ${MANY_SLOTS} slots`;
const HOLD_CEILING_HOT = `hold ceiling, 1 hot slot after ${HOT_PILE} live holds`;
const API_HOLDS = `hold via API, ${MANY_SLOTS} slots round robin`;
const API_HOLDS_HOT = `hold via API, 1 hot slot after ${HOT_PILE} live holds (TTL 600 s)`;
const API_HOLD_EMPTY = 'hold via API, cost on a slot with 0 live holds';
const API_HOLD_DEEP = `hold via API, cost on a slot with ${DEEP_PILE} live holds`;

/** Starts a ceiling server (a bench/ceilings script) and waits for `readyPath`. */
export async function startCeiling(name: string, script: string, env: Record<string, string>, readyPath: string) {
  const port = await freePort();
  const child = spawnNode(name, ROOT, [script], { ...env, PORT: String(port) });
  const url = `http://127.0.0.1:${port}`;
  await untilReady(child, `${url}${readyPath}`);
  return { url, child };
}

/** The baseline and the bare hold ceiling (on 200 slots, and on a hot slot with a pile). */
export async function holdCeilings(): Promise<Row[]> {
  const rows: Row[] = [];
  const baseline = await startCeiling('baseline', 'bench/ceilings/baseline-server.ts', {}, '/');
  const m = await measure(BASELINE, { urls: [baseline.url], requests: [{ method: 'GET', path: '/' }] });
  rows.push({ name: BASELINE, unit: 'rps', ...figures(m) });
  await stopChild(baseline.child);

  const ceiling = await startCeiling('hold ceiling', 'bench/ceilings/hold-server.ts', {}, '/healthz');
  const experienceId = randomUUID();
  const slots = Array.from({ length: MANY_SLOTS }, () => randomUUID());
  const many = await measure(HOLD_CEILING, { urls: [ceiling.url], requests: holdRequests(experienceId, slots) });
  rows.push({ name: HOLD_CEILING, unit: 'rps', against: BASELINE, ...figures(many) });

  const hot = randomUUID();
  const piled = await pileUpHolds(ceiling.url, experienceId, hot, HOT_PILE, PILE_TIME_LIMIT_MS);
  const m2 = await measure(HOLD_CEILING_HOT, { urls: [ceiling.url], requests: holdRequests(experienceId, [hot]) });
  rows.push({ name: HOLD_CEILING_HOT, unit: 'rps', against: BASELINE, ...figures(m2), ...pileNote(piled, HOT_PILE) });
  await stopChild(ceiling.child);
  return rows;
}

function pileNote(piled: number, wanted: number): { note?: string } {
  return piled < wanted ? { note: `only ${piled} piled in ${PILE_TIME_LIMIT_MS / 1000} s` } : {};
}

/**
 * Holds through one API process of a checkout: 200 slots; one hot slot after 10,000 live
 * holds; and one hold's cost on an empty slot and on one with 50,000 live holds (1,000 holds
 * each at 10 connections, so each run adds few to its pile).
 */
export async function apiHolds(api: Api, target: Target): Promise<Row[]> {
  const rss = () => ({ rssMb: { api: rssMb(api.child) } });
  const rows: Row[] = [];
  const slots = await target.makeSlots(MANY_SLOTS);
  const many = await measure(API_HOLDS, { urls: [api.url], requests: holdRequests(target.experienceId, slots) });
  rows.push({ name: API_HOLDS, unit: 'rps', against: BASELINE, goal: { minRatio: 0.45 }, ...figures(many), ...rss() });

  const [hot, empty, deep, warm] = await target.makeSlots(4);
  process.stderr.write(`${API_HOLDS_HOT}: piling up... `);
  const piledHot = await pileUpHolds(api.url, target.experienceId, hot!, HOT_PILE, PILE_TIME_LIMIT_MS);
  process.stderr.write(`${piledHot}\n`);
  const m = await measure(API_HOLDS_HOT, { urls: [api.url], requests: holdRequests(target.experienceId, [hot!]) });
  rows.push({
    name: API_HOLDS_HOT,
    unit: 'rps',
    against: BASELINE,
    goal: { minRatio: 0.35 },
    ...figures(m),
    ...pileNote(piledHot, HOT_PILE),
    ...rss(),
  });

  process.stderr.write(`${API_HOLD_DEEP}: piling up... `);
  const pileStarted = Date.now();
  const piledDeep = await pileUpHolds(api.url, target.experienceId, deep!, DEEP_PILE, PILE_TIME_LIMIT_MS);
  process.stderr.write(`${piledDeep} in ${((Date.now() - pileStarted) / 1000).toFixed(1)} s\n`);
  const cost = (slot: string) => ({
    urls: [api.url],
    requests: holdRequests(target.experienceId, [slot]),
    amount: COST_REQUESTS,
    connections: COST_CONNECTIONS,
  });
  // The warm-up goes to a slot of its own, so the empty slot is empty when measured.
  const warmup = { ...cost(warm!), amount: 300 };
  const onEmpty = await measure(API_HOLD_EMPTY, cost(empty!), warmup);
  rows.push({ name: API_HOLD_EMPTY, unit: 'rps', ...figures(onEmpty), ...rss() });
  const onDeep = await measure(API_HOLD_DEEP, cost(deep!), warmup);
  rows.push({
    name: API_HOLD_DEEP,
    unit: 'rps',
    against: API_HOLD_EMPTY,
    goal: { minRatio: 0.9 },
    ...figures(onDeep),
    ...pileNote(piledDeep, DEEP_PILE),
    ...rss(),
  });
  return rows;
}
