import { randomUUID } from 'node:crypto';
import { holdRequests, pileUpHolds, type Api } from '../lib/api';
import type { Target } from '../lib/catalogue';
import { besideBaseline, startCeiling, withBaseline } from '../lib/baseline';
import { rssMb, stopChild } from '../lib/children';
import { figures, measurePair } from '../lib/load';
import type { Row } from '../lib/report';

export const MANY_SLOTS = 200;
/** Live holds piled on the hot slot before it is measured (issue 12, goal 1). */
const HOT_PILE = 10_000;
/** Live holds on the slot whose hold cost is compared with an empty one's. */
const DEEP_PILE = 50_000;
/** A pile stops here whatever its count; the row then says how many were placed. */
const PILE_TIME_LIMIT_MS = 90_000;
/** Holds placed to measure one hold's cost, at a low concurrency, on fresh slots and on the deep slot. */
const COST_REQUESTS = 3_000;
/** Fresh slots the cost on an empty slot is measured on, round robin: each ends with few live holds. */
const FRESH_SLOTS = 9;
const COST_CONNECTIONS = 10;

const HOLD_CEILING = `hold ceiling: Express + rate limit + SET NX + O(1) script, ${MANY_SLOTS} slots`;
const HOLD_CEILING_HOT = `hold ceiling, 1 hot slot after ${HOT_PILE} live holds`;
const API_HOLDS = `hold via API, ${MANY_SLOTS} slots round robin`;
const API_HOLDS_HOT = `hold via API, 1 hot slot after ${HOT_PILE} live holds (TTL 600 s)`;
const API_HOLD_EMPTY = `hold via API, cost on ${FRESH_SLOTS} fresh slots (0 live holds at first, ${Math.ceil(COST_REQUESTS / FRESH_SLOTS)} at the end)`;
const API_HOLD_DEEP = `hold via API, cost on a slot with ${DEEP_PILE} live holds`;

/** The bare hold ceiling (on 200 slots, and on a hot slot with a pile), each beside the baseline. */
export async function holdCeilings(): Promise<Row[]> {
  const ceiling = await startCeiling('hold ceiling', 'bench/ceilings/hold-server.ts', {}, '/healthz');
  try {
    return await withBaseline(async (baselineUrl) => {
      const experienceId = randomUUID();
      const slots = Array.from({ length: MANY_SLOTS }, () => randomUUID());
      const run = (slotIds: string[]) => ({ urls: [ceiling.url], requests: holdRequests(experienceId, slotIds) });
      const [baseline, many] = await besideBaseline(baselineUrl, HOLD_CEILING, run(slots));
      const rows: Row[] = [baseline, { name: HOLD_CEILING, unit: 'rps', against: baseline.name, ...figures(many) }];

      const hot = randomUUID();
      const piled = await pileUpHolds(ceiling.url, experienceId, hot, HOT_PILE, PILE_TIME_LIMIT_MS);
      const [hotBaseline, m] = await besideBaseline(baselineUrl, HOLD_CEILING_HOT, run([hot]));
      rows.push(hotBaseline, {
        name: HOLD_CEILING_HOT,
        unit: 'rps',
        against: hotBaseline.name,
        ...figures(m, pileNote(piled, HOT_PILE)),
      });
      return rows;
    });
  } finally {
    await stopChild(ceiling.child);
  }
}

function pileNote(piled: number, wanted: number): string {
  return piled < wanted ? `only ${piled} piled in ${PILE_TIME_LIMIT_MS / 1000} s` : '';
}

/**
 * Holds through one API process of a checkout: 200 slots and one hot slot after 10,000 live
 * holds, each beside the baseline; then one hold's cost on an empty slot and on one with 50,000
 * live holds.
 */
export async function apiHolds(api: Api, target: Target): Promise<Row[]> {
  const rows = await withBaseline((baselineUrl) => apiHoldsBesideBaseline(api, target, baselineUrl));
  rows.push(...(await apiHoldCost(api, target)));
  return rows;
}

const apiRss = (api: Api) => ({ rssMb: { api: rssMb(api.child) } });

/** The API's holds whose ratios are taken against the baseline, each measured beside it. */
async function apiHoldsBesideBaseline(api: Api, target: Target, baselineUrl: string): Promise<Row[]> {
  const run = (slots: string[]) => ({ urls: [api.url], requests: holdRequests(target.experienceId, slots) });
  const [baseline, many] = await besideBaseline(baselineUrl, API_HOLDS, run(await target.makeSlots(MANY_SLOTS)));
  const rows: Row[] = [
    baseline,
    {
      name: API_HOLDS,
      unit: 'rps',
      against: baseline.name,
      goal: { minRatio: 0.45 },
      ...figures(many),
      ...apiRss(api),
    },
  ];

  const [hot] = await target.makeSlots(1);
  process.stderr.write(`${API_HOLDS_HOT}: piling up... `);
  const piledHot = await pileUpHolds(api.url, target.experienceId, hot!, HOT_PILE, PILE_TIME_LIMIT_MS);
  process.stderr.write(`${piledHot}\n`);
  const [hotBaseline, m] = await besideBaseline(baselineUrl, API_HOLDS_HOT, run([hot!]));
  rows.push(hotBaseline, {
    name: API_HOLDS_HOT,
    unit: 'rps',
    against: hotBaseline.name,
    goal: { minRatio: 0.35 },
    ...figures(m, pileNote(piledHot, HOT_PILE)),
    ...apiRss(api),
  });
  return rows;
}

/**
 * One hold's cost on fresh slots and on one with 50,000 live holds, measured side by side in
 * rounds (3,000 holds each at 10 connections, so the deep slot's pile barely grows and the
 * fresh slots end with a few hundred each).
 */
async function apiHoldCost(api: Api, target: Target): Promise<Row[]> {
  const [deep, warm] = await target.makeSlots(2);
  const fresh = await target.makeSlots(FRESH_SLOTS);
  process.stderr.write(`${API_HOLD_DEEP}: piling up... `);
  const pileStarted = Date.now();
  const piledDeep = await pileUpHolds(api.url, target.experienceId, deep!, DEEP_PILE, PILE_TIME_LIMIT_MS);
  process.stderr.write(`${piledDeep} in ${((Date.now() - pileStarted) / 1000).toFixed(1)} s\n`);
  const cost = (slots: string[]) => ({
    urls: [api.url],
    requests: holdRequests(target.experienceId, slots),
    amount: COST_REQUESTS,
    connections: COST_CONNECTIONS,
  });
  // The warm-ups go to a slot of their own, so the fresh slots are empty when measured.
  const warmup = { ...cost([warm!]), amount: 300 };
  const [onFresh, onDeep] = await measurePair(
    { label: API_HOLD_EMPTY, run: cost(fresh), warmup },
    { label: API_HOLD_DEEP, run: cost([deep!]), warmup },
  );
  return [
    { name: API_HOLD_EMPTY, unit: 'rps', ...figures(onFresh), ...apiRss(api) },
    {
      name: API_HOLD_DEEP,
      unit: 'rps',
      against: API_HOLD_EMPTY,
      goal: { minRatio: 0.9 },
      ...figures(onDeep, pileNote(piledDeep, DEEP_PILE)),
      ...apiRss(api),
    },
  ];
}
