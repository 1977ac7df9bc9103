import { holdRequests, startApi, type Api } from '../lib/api';
import type { Target } from '../lib/catalogue';
import { CAN_PIN, rssMb, stopChild, type Child } from '../lib/children';
import type { Checkout } from '../lib/checkout';
import { figures, measureSideBySide, PAIR_ROUNDS } from '../lib/load';
import { startDispatcher, type Outbox } from '../lib/outbox';
import type { Receiver } from '../lib/receiver';
import type { Row } from '../lib/report';
import { MANY_SLOTS } from './holds';
import { mergeBursts, oneBurst, warmUp, type BurstRound } from './webhooks';

const API_ONE = `scale: hold via 1 API pinned to core 0, ${MANY_SLOTS} slots`;
const API_TWO = `scale: hold via 2 APIs pinned to cores 0 and 1, ${MANY_SLOTS} slots`;
const DISPATCHER_ONE = 'scale: burst via 1 dispatcher pinned to core 0';
const DISPATCHER_TWO = 'scale: burst via 2 dispatchers pinned to cores 0 and 1';

/** What shares a core in the scale runs, for the output. */
export const SCALE_NOTE = CAN_PIN
  ? 'Scale runs pin each app process to its own core with taskset; PostgreSQL, Redis, the load generator and the receiver (this process) are not pinned and share both cores with them.'
  : 'taskset is not available: the scale runs are not pinned.';

/** Holds over 200 slots through 1 API process on core 0, and through 2 on cores 0 and 1 (load split evenly), in rounds. */
export async function apiScale(checkout: Checkout, databaseUrl: string, target: Target): Promise<Row[]> {
  const apis: Api[] = [];
  try {
    const slots = await target.makeSlots(MANY_SLOTS);
    apis.push(await startApi(checkout, databaseUrl, 0), await startApi(checkout, databaseUrl, 1));
    // Side by side in rounds, the second API idle in the first's: see measureSideBySide.
    const [one, two] = await measureSideBySide([
      { label: API_ONE, run: { urls: [apis[0]!.url], requests: holdRequests(target.experienceId, slots) } },
      { label: API_TWO, run: { urls: apis.map((a) => a.url), requests: holdRequests(target.experienceId, slots) } },
    ]);
    return [
      { name: API_ONE, unit: 'rps', ...figures(one!), rssMb: { api: rssMb(apis[0]!.child) } },
      {
        name: API_TWO,
        unit: 'rps',
        against: API_ONE,
        goal: { minRatio: 1.6 },
        ...figures(two!),
        rssMb: { api1: rssMb(apis[0]!.child), api2: rssMb(apis[1]!.child) },
      },
    ];
  } finally {
    await Promise.all(apis.map((api) => stopChild(api.child)));
  }
}

/**
 * The burst through 1 dispatcher on core 0 and through 2 on cores 0 and 1, in rounds alternating
 * between the two: the second dispatcher is started (and warmed up) for each of its rounds and
 * stopped after it, so the 1-dispatcher rounds run alone. Each row notes where the machine's CPU
 * went, which says what limits the second one's gain on 2 cores.
 */
export async function dispatcherScale(outbox: Outbox, receiver: Receiver): Promise<Row[]> {
  const label = outbox.checkout.label;
  const first = await startDispatcher(outbox, `dispatcher (${label}, core 0)`, 0);
  let second: Child | undefined;
  try {
    process.stderr.write(`${DISPATCHER_ONE} | ${DISPATCHER_TWO}: warming up... `);
    await warmUp(outbox, receiver);
    process.stderr.write(`measuring ${PAIR_ROUNDS} rounds... `);
    const ones: BurstRound[] = [];
    const twos: BurstRound[] = [];
    let rssTwo: Record<string, number> = {};
    for (let round = 0; round < PAIR_ROUNDS; round += 1) {
      ones.push(await oneBurst(outbox, receiver));
      second = await startDispatcher(outbox, `dispatcher (${label}, core 1)`, 1);
      await warmUp(outbox, receiver);
      twos.push(await oneBurst(outbox, receiver));
      rssTwo = { dispatcher1: rssMb(first), dispatcher2: rssMb(second) };
      await stopChild(second);
      second = undefined;
    }
    const [one, two] = [await mergeBursts(outbox, receiver, ones), await mergeBursts(outbox, receiver, twos)];
    process.stderr.write(`${one.perSecond.toFixed(0)} | ${two.perSecond.toFixed(0)} deliveries/s\n`);
    return [
      {
        name: DISPATCHER_ONE,
        unit: 'per_s',
        value: one.perSecond,
        p50: one.p50,
        p99: one.p99,
        rssMb: { dispatcher: rssMb(first) },
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
        rssMb: rssTwo,
        note: two.note,
      },
    ];
  } finally {
    if (second) await stopChild(second);
    await stopChild(first);
  }
}
