import { randomUUID } from 'node:crypto';
import { holdRequests, pileUpHolds, sideLabel, type Api, type CheckoutApi } from '../lib/api';
import { apisBesideBaseline, besideBaseline, startCeiling, withBaseline } from '../lib/baseline';
import { rssMb, stopChild } from '../lib/children';
import { figures, measureSideBySide, type Side } from '../lib/load';
import { appendRows, noRows, type CheckoutRows, type Row } from '../lib/report';

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
      const [baseline, [many]] = await besideBaseline(baselineUrl, HOLD_CEILING, [
        { label: HOLD_CEILING, run: run(slots) },
      ]);
      const rows: Row[] = [baseline, { name: HOLD_CEILING, unit: 'rps', against: baseline.name, ...figures(many!) }];

      const hot = randomUUID();
      const piled = await pileUpHolds(ceiling.url, experienceId, hot, HOT_PILE, PILE_TIME_LIMIT_MS);
      const [hotBaseline, [m]] = await besideBaseline(baselineUrl, HOLD_CEILING_HOT, [
        { label: HOLD_CEILING_HOT, run: run([hot]) },
      ]);
      rows.push(hotBaseline, {
        name: HOLD_CEILING_HOT,
        unit: 'rps',
        against: hotBaseline.name,
        ...figures(m!, pileNote(piled, HOT_PILE)),
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
 * Holds through one API process of each checkout: 200 slots and one hot slot after 10,000 live
 * holds, every checkout's side by side with the baseline; then one hold's cost on an empty slot
 * and on one with 50,000 live holds, every checkout's side by side.
 */
export async function apiHolds(apps: CheckoutApi[]): Promise<CheckoutRows> {
  const rows = await withBaseline((baselineUrl) => apiHoldsBesideBaseline(apps, baselineUrl));
  appendRows(rows, await apiHoldCost(apps));
  return rows;
}

const apiRss = (api: Api) => ({ rssMb: { api: rssMb(api.child) } });

const holdRun = (app: CheckoutApi, slots: string[]) => ({
  urls: [app.api.url],
  requests: holdRequests(app.target.experienceId, slots),
});

/** The APIs' holds whose ratios are taken against the baseline, measured side by side with it. */
async function apiHoldsBesideBaseline(apps: CheckoutApi[], baselineUrl: string): Promise<CheckoutRows> {
  const many = [];
  for (const app of apps) many.push({ app, run: holdRun(app, await app.target.makeSlots(MANY_SLOTS)) });
  const rows = await apisBesideBaseline(baselineUrl, API_HOLDS, many, { minRatio: 0.45 });

  const hot = [];
  for (const app of apps) {
    const [slot] = await app.target.makeSlots(1);
    process.stderr.write(`${sideLabel(API_HOLDS_HOT, app.checkout)}: piling up... `);
    const piled = await pileUpHolds(app.api.url, app.target.experienceId, slot!, HOT_PILE, PILE_TIME_LIMIT_MS);
    process.stderr.write(`${piled}\n`);
    hot.push({ app, run: holdRun(app, [slot!]), note: pileNote(piled, HOT_PILE) });
  }
  appendRows(rows, await apisBesideBaseline(baselineUrl, API_HOLDS_HOT, hot, { minRatio: 0.35 }));
  return rows;
}

/**
 * One hold's cost on fresh slots and on one with 50,000 live holds, for every checkout, all
 * measured side by side in rounds (3,000 holds each at 10 connections, so the deep slot's pile
 * barely grows and the fresh slots end with a few hundred each).
 */
async function apiHoldCost(apps: CheckoutApi[]): Promise<CheckoutRows> {
  const sides: Side[] = [];
  const piles: number[] = [];
  for (const app of apps) {
    const { api, target } = app;
    const [deep, warm] = await target.makeSlots(2);
    const fresh = await target.makeSlots(FRESH_SLOTS);
    process.stderr.write(`${sideLabel(API_HOLD_DEEP, app.checkout)}: piling up... `);
    const pileStarted = Date.now();
    const piled = await pileUpHolds(api.url, target.experienceId, deep!, DEEP_PILE, PILE_TIME_LIMIT_MS);
    process.stderr.write(`${piled} in ${((Date.now() - pileStarted) / 1000).toFixed(1)} s\n`);
    piles.push(piled);
    const cost = (slots: string[]) => ({
      ...holdRun(app, slots),
      amount: COST_REQUESTS,
      connections: COST_CONNECTIONS,
    });
    // The warm-ups go to a slot of their own, so the fresh slots are empty when measured.
    const warmup = { ...cost([warm!]), amount: 300 };
    sides.push(
      { label: sideLabel(API_HOLD_EMPTY, app.checkout), run: cost(fresh), warmup },
      { label: sideLabel(API_HOLD_DEEP, app.checkout), run: cost([deep!]), warmup },
    );
  }
  const measured = await measureSideBySide(sides);
  const rows = noRows();
  apps.forEach((app, i) =>
    rows[app.checkout.label].push(
      { name: API_HOLD_EMPTY, unit: 'rps', ...figures(measured[2 * i]!), ...apiRss(app.api) },
      {
        name: API_HOLD_DEEP,
        unit: 'rps',
        against: API_HOLD_EMPTY,
        goal: { minRatio: 0.9 },
        ...figures(measured[2 * i + 1]!, pileNote(piles[i]!, DEEP_PILE)),
        ...apiRss(app.api),
      },
    ),
  );
  return rows;
}
