import { holdRequests, sideLabel, startApi, type Api } from '../lib/api';
import type { Catalogue } from '../lib/catalogue';
import { CAN_PIN, rssMb, stopChild, type Child } from '../lib/children';
import type { Checkout } from '../lib/checkout';
import { figures, measureSideBySide, roundOrder, roundsFor, type Side } from '../lib/load';
import { startDispatcher, type Outbox } from '../lib/outbox';
import type { Receiver } from '../lib/receiver';
import { noRows, type CheckoutRows } from '../lib/report';
import { MANY_SLOTS } from './holds';
import { mergeBursts, oneBurst, warmUp, type BurstRound } from './webhooks';

const API_ONE = `scale: hold via 1 API pinned to core 0, ${MANY_SLOTS} slots`;
const API_TWO = `scale: hold via 2 APIs pinned to cores 0 and 1, ${MANY_SLOTS} slots`;
const DISPATCHER_ONE = 'scale: burst via 1 dispatcher pinned to core 0';
const DISPATCHER_TWO = 'scale: burst via 2 dispatchers pinned to cores 0 and 1';

/**
 * What shares a core in the scale runs, for the output; `withBefore`: a before checkout's apps run
 * too; `withReceiver`: the webhook receiver runs (the dispatchers' scale does).
 */
export function scaleNote(withBefore: boolean, withReceiver: boolean): string {
  if (!CAN_PIN) return 'taskset is not available: the scale runs are not pinned.';
  const before = withBefore
    ? " (a before checkout's to the same cores, up while this checkout's run, and the other way round)"
    : '';
  const shared = withReceiver
    ? 'PostgreSQL, Redis, the load generator and the receiver (this process) are'
    : 'PostgreSQL, Redis and the load generator (this process) are';
  return `Scale runs pin each app process to its own core with taskset${before}; ${shared} not pinned and share both cores with them.`;
}

/**
 * Holds over 200 slots through 1 API process on core 0, and through 2 on cores 0 and 1 (load split
 * evenly), every checkout's side by side in rounds (an API is idle while another side runs).
 */
export async function apiScale(catalogues: Catalogue[]): Promise<CheckoutRows> {
  const set: { checkout: Checkout; apis: Api[] }[] = [];
  const sides: Side[] = [];
  try {
    for (const { checkout, databaseUrl, target } of catalogues) {
      const slots = await target.makeSlots(MANY_SLOTS);
      const apis: Api[] = [];
      set.push({ checkout, apis });
      for (const core of [0, 1]) apis.push(await startApi(checkout, databaseUrl, core));
      const requests = holdRequests(target.experienceId, slots);
      sides.push(
        { label: sideLabel(API_ONE, checkout), run: { urls: [apis[0]!.url], requests } },
        { label: sideLabel(API_TWO, checkout), run: { urls: apis.map((a) => a.url), requests } },
      );
    }
    const measured = await measureSideBySide(sides);
    const rows = noRows();
    for (const [i, { checkout, apis }] of set.entries())
      rows[checkout.label].push(
        { name: API_ONE, unit: 'rps', ...figures(measured[2 * i]!), rssMb: { api: rssMb(apis[0]!.child) } },
        {
          name: API_TWO,
          unit: 'rps',
          against: API_ONE,
          goal: { minRatio: 1.6 },
          ...figures(measured[2 * i + 1]!),
          rssMb: { api1: rssMb(apis[0]!.child), api2: rssMb(apis[1]!.child) },
        },
      );
    return rows;
  } finally {
    await Promise.all(set.flatMap(({ apis }) => apis.map((api) => stopChild(api.child))));
  }
}

/** One checkout's dispatcher scale run: its first dispatcher, kept up, and its rounds. */
interface ScaleRun {
  first: Child;
  ones: BurstRound[];
  twos: BurstRound[];
  rssTwo: Record<string, number>;
}

/**
 * The burst through 1 dispatcher on core 0 and through 2 on cores 0 and 1, in rounds alternating
 * between the two: the second dispatcher is started for each of its rounds and stopped after it,
 * so the 1-dispatcher rounds run alone. Each round takes every checkout's pair in turn, in
 * roundOrder; a checkout's first dispatcher is idle while the other's pair runs, longer than an
 * idle socket to the receiver is kept, so every burst follows a warm-up of its own. Each row notes
 * where the machine's CPU went, which says what limits the second one's gain on 2 cores.
 */
export async function dispatcherScale(outboxes: Outbox[], receiver: Receiver): Promise<CheckoutRows> {
  const runs = new Map<Outbox, ScaleRun>();
  let second: Child | undefined;
  try {
    for (const outbox of outboxes) {
      const first = await startDispatcher(outbox, `dispatcher (${outbox.checkout.label}, core 0)`, { core: 0 });
      runs.set(outbox, { first, ones: [], twos: [], rssTwo: {} });
    }
    const labels = outboxes.map((outbox) => outbox.checkout.label).join(', ');
    const rounds = roundsFor(outboxes.length);
    process.stderr.write(`${DISPATCHER_ONE} | ${DISPATCHER_TWO} [${labels}]: measuring ${rounds} rounds... `);
    for (let round = 0; round < rounds; round += 1)
      for (const outbox of roundOrder(outboxes, round)) {
        const run = runs.get(outbox)!;
        await warmUp(outbox, receiver);
        run.ones.push(await oneBurst(outbox, receiver));
        second = await startDispatcher(outbox, `dispatcher (${outbox.checkout.label}, core 1)`, { core: 1 });
        await warmUp(outbox, receiver, 2);
        run.twos.push(await oneBurst(outbox, receiver));
        run.rssTwo = { dispatcher1: rssMb(run.first), dispatcher2: rssMb(second) };
        await stopChild(second);
        second = undefined;
      }
    const rows = noRows();
    for (const [outbox, run] of runs) {
      const [one, two] = [await mergeBursts(outbox, receiver, run.ones), await mergeBursts(outbox, receiver, run.twos)];
      process.stderr.write(
        `[${outbox.checkout.label}] ${one.perSecond.toFixed(0)} | ${two.perSecond.toFixed(0)} deliveries/s `,
      );
      rows[outbox.checkout.label].push(
        {
          name: DISPATCHER_ONE,
          unit: 'per_s',
          value: one.perSecond,
          p50: one.p50,
          p99: one.p99,
          rssMb: { dispatcher: rssMb(run.first) },
          note: one.note,
        },
        {
          name: DISPATCHER_TWO,
          unit: 'per_s',
          against: DISPATCHER_ONE,
          goal: { minRatio: 1.6 },
          value: two.perSecond,
          p50: two.p50,
          p99: two.p99,
          rssMb: run.rssTwo,
          note: two.note,
        },
      );
    }
    process.stderr.write('\n');
    return rows;
  } finally {
    if (second) await stopChild(second);
    for (const { first } of runs.values()) await stopChild(first);
  }
}
