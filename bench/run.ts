/**
 * `pnpm bench`: every scenario of issue 12 with its ceilings, in one run, on loopback.
 *
 * Ceilings (from this checkout): the baseline (Express 5 + one Redis GET), the bare hold
 * ceiling, the bare booking ceiling on raw pg, BullMQ no-op jobs and BullMQ + one POST per job.
 * Apps (run for this checkout, and for BENCH_BEFORE_ROOT's when set, from its own root with its
 * own databases and queue prefix): holds, the widget read, bookings and the dispatcher burst through the real
 * processes, and their scaling over two pinned processes, directly and behind HAProxy; and the
 * relay's poll over relayed events awaiting VACUUM, bounded and not (this checkout). A row
 * whose ratio is to the baseline, the booking ceiling or the BullMQ + POST ceiling, or to another
 * row (the hold cost on fresh slots, 1 process against 2), is measured in rounds side by side
 * with that row and with the other checkout's same rows, in an order that turns each round, so
 * no side always runs first; the hold ceilings and the BullMQ no-op ceiling run once. Measured
 * rows note where the CPU went. Prints the table and writes bench/results/latest.json.
 * Everything shares one machine, so only ratios taken in one run mean anything; docs/testing.md
 * describes each scenario. Groups named on the command line (bench/lib/selection.ts) limit the
 * run to their scenarios, and write bench/results/partial.json instead.
 */
import { startApi, type CheckoutApi } from './lib/api';
import { prepareCatalogue, type Catalogue } from './lib/catalogue';
import { CAN_PIN, runBench, stopAll, stopChild } from './lib/children';
import { benchDatabase, checkouts, type Checkout } from './lib/checkout';
import { databaseUrl } from './lib/env';
import { CONNECTIONS, DURATION_SECONDS, ROUNDS, WARMUP_SECONDS } from './lib/load';
import { prepareOutbox, removeOutbox, WEBHOOK_CONCURRENCY, type Outbox } from './lib/outbox';
import { startReceiver, type Receiver } from './lib/receiver';
import { appendRows, noRows, printTable, writeJson, type CheckoutRows, type Row } from './lib/report';
import { commandLineSelection, needs, runsAny, type Selection } from './lib/selection';
import { apiBookings } from './scenarios/bookings';
import { apiHolds, holdCeilings } from './scenarios/holds';
import { apiLoadBalancer } from './scenarios/load-balancer';
import { apiScale, dispatcherScale, scaleNote } from './scenarios/scale';
import { relayPollCost } from './scenarios/relay-poll';
import { dispatcherBurst, noopCeiling } from './scenarios/webhooks';
import { apiWidgetRead } from './scenarios/widget';

/** The rows of the apps' scenarios, by checkout. */
interface AppRows {
  holds: CheckoutRows;
  reads: CheckoutRows;
  bookings: CheckoutRows;
  dispatcher: CheckoutRows;
  scale: CheckoutRows;
}

/**
 * A scenario's name in a failure, with the checkouts it ran for: every checkout's side runs in the
 * same rounds, so a failure of either ends the scenario for both.
 */
const bothOf = (scenario: string, list: Checkout[]) => `${scenario} (${list.map((c) => c.label).join(', ')})`;

/** Scenarios that failed, by name and error: the run goes on without their rows, and says so. */
const failures: { scenario: string; error: string }[] = [];

async function attempt<T>(scenario: string, run: () => Promise<T>, none: T): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`\n${scenario} FAILED: ${message}\n`);
    failures.push({ scenario, error: message.slice(0, 500) });
    return none;
  }
}

/**
 * Holds, the widget read and bookings through one API of each checkout, then the API's scaling,
 * directly and behind HAProxy (those `selection` runs): every checkout's rows side by side, each
 * checkout booking on a catalogue in its own database.
 */
async function apiRuns(list: Checkout[], rows: AppRows, selection: Selection): Promise<void> {
  const catalogues: Catalogue[] = [];
  try {
    for (const checkout of list) {
      const url = databaseUrl(benchDatabase(checkout, 'booking_bench'));
      process.stderr.write(`\n[${checkout.label}] ${checkout.root}, database ${url}\n`);
      catalogues.push({ checkout, databaseUrl: url, target: await prepareCatalogue(checkout, url) });
    }
    if (needs(selection).sideBySideApis) await sideBySide(catalogues, rows, selection);
    const of = (scenario: string) => bothOf(scenario, list);
    if (runsAny(selection, 'scale'))
      appendRows(rows.scale, await attempt(of('API scale'), () => apiScale(catalogues), noRows()));
    if (runsAny(selection, 'lb'))
      appendRows(rows.scale, await attempt(of('load balancer'), () => apiLoadBalancer(catalogues), noRows()));
  } finally {
    await settleAll(
      'closing a catalogue',
      catalogues.map(({ target }) => target.close()),
    );
  }
}

/** The scenarios run on one API of each checkout, all up at once and stopped when they are done. */
async function sideBySide(catalogues: Catalogue[], rows: AppRows, selection: Selection): Promise<void> {
  const apps: CheckoutApi[] = [];
  const checkoutsOf = catalogues.map((c) => c.checkout);
  const of = (scenario: string) => bothOf(scenario, checkoutsOf);
  try {
    for (const catalogue of catalogues)
      apps.push({ ...catalogue, api: await startApi(catalogue.checkout, catalogue.databaseUrl) });
    if (runsAny(selection, 'holds')) rows.holds = await attempt(of('holds'), () => apiHolds(apps), noRows());
    if (runsAny(selection, 'widget'))
      rows.reads = await attempt(of('widget read'), () => apiWidgetRead(apps), noRows());
    if (runsAny(selection, 'bookings'))
      rows.bookings = await attempt(of('bookings'), () => apiBookings(apps), noRows());
  } finally {
    for (const app of apps) await stopChild(app.api.child);
  }
}

/**
 * The burst through one dispatcher of each checkout, side by side; then the dispatcher's scaling,
 * every checkout's pair of rounds in turn within each round; then this checkout's relay poll
 * (those `selection` runs).
 */
async function dispatcherRuns(
  list: Checkout[],
  receiver: Receiver,
  rows: AppRows,
  selection: Selection,
): Promise<void> {
  const outboxes: Outbox[] = [];
  try {
    for (const checkout of needs(selection).everyCheckoutsOutbox ? list : list.slice(0, 1)) {
      const url = databaseUrl(benchDatabase(checkout, 'booking_bench_webhooks'));
      outboxes.push(await prepareOutbox(checkout, url, receiver));
      process.stderr.write(`\n[${checkout.label}] dispatcher, database ${url}\n`);
    }
    if (runsAny(selection, 'webhooks'))
      rows.dispatcher = await attempt(bothOf('dispatcher', list), () => dispatcherBurst(outboxes, receiver), noRows());
    const scale = () => dispatcherScale(outboxes, receiver);
    if (runsAny(selection, 'scale'))
      appendRows(rows.scale, await attempt(bothOf('dispatcher scale', list), scale, noRows()));
    // This checkout's claim statement (checkouts() lists it first), bounded and not: the before
    // checkout's may take no bound.
    if (runsAny(selection, 'relay'))
      rows.dispatcher.after.push(...(await attempt('relay poll', () => relayPollCost(outboxes[0]!), [])));
  } finally {
    await settleAll('removing an outbox', outboxes.map(removeOutbox));
  }
}

/** Waits for every one of `work`, each checkout's, whatever the others do; says what failed. */
async function settleAll(what: string, work: Promise<void>[]): Promise<void> {
  for (const result of await Promise.allSettled(work))
    if (result.status === 'rejected') process.stderr.write(`${what} failed: ${String(result.reason)}\n`);
}

/** The after checkout's rows, each carrying the same scenario's figures from the before checkout. */
function merge({ after, before }: CheckoutRows): Row[] {
  return after.map((row) => {
    const other = before.find((r) => r.name === row.name);
    return other
      ? { ...row, before: { value: other.value, p50: other.p50, p99: other.p99, rssMb: other.rssMb, note: other.note } }
      : row;
  });
}

/** The lines printed under the table: how the groups that ran were measured. */
function runNotes(selection: Selection, seconds: number, before: boolean, table: Row[]): string[] {
  // The groups that book on a catalogue are the ones that send HTTP load.
  const http = needs(selection).catalogues;
  const bookings = runsAny(selection, 'bookings') ? ', bookings 200 warm-up + 2000' : '';
  const load = http
    ? ` HTTP: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s${bookings}.`
    : '';
  const dispatchers = needs(selection).everyCheckoutsOutbox ? ` WEBHOOK_CONCURRENCY ${WEBHOOK_CONCURRENCY}.` : '';
  // The relay's poll is timed in the bench process itself: no rounds beside another row, no CPU notes.
  const measuredApps = selection.groups.some((group) => group !== 'relay');
  const dispatcherRounds = runsAny(selection, 'scale')
    ? ` 1 against 2 dispatchers: ${ROUNDS} rounds, each taking every checkout's 1 then 2 (each burst after a warm-up of its own), the checkouts' order turned.`
    : '';
  return [
    `Loopback, one run${selection.full ? '' : ` of ${selection.groups.join(', ')}`}, ${seconds} s.${load}${dispatchers}`,
    ...(measuredApps
      ? [
          `Side-by-side rows (a row against the baseline, a booking ceiling or the BullMQ + POST ceiling, with that ceiling's row; the hold cost rows; 1 against 2 APIs, directly and behind HAProxy; each with the before checkout's same rows): one warm-up each, then ${ROUNDS} rounds (or one per side, when more) in which each runs once, the order turned by one each round (HTTP rounds a share of the measured time or amount; webhook rounds a whole burst).${dispatcherRounds}`,
          'Notes give the cores busy and the CPU ms per request, delivery or job of each process group over the measured rounds.',
        ]
      : []),
    'PostgreSQL, Redis, the load generator and every app share this machine: compare ratios within this run only.',
    ...(runsAny(selection, 'scale', 'lb') ? [scaleNote(before, runsAny(selection, 'scale'))] : []),
    ...(runsAny(selection, 'lb') ? ['HAProxy is not pinned.'] : []),
    ...(table.some((row) => row.before)
      ? [
          "before = the same scenario on BENCH_BEFORE_ROOT's apps, measured in the same rounds as this checkout's: against the same ceiling rounds, or against its own 1-process or fresh-slot row.",
        ]
      : []),
  ];
}

async function main(selection: Selection): Promise<void> {
  const startedAt = Date.now();
  const list = await checkouts();
  const receiver = needs(selection).outboxes ? await startReceiver() : null;
  try {
    const rows: AppRows = {
      holds: noRows(),
      reads: noRows(),
      bookings: noRows(),
      dispatcher: noRows(),
      scale: noRows(),
    };
    const holdCeilingRows = runsAny(selection, 'holds') ? await attempt('hold ceilings', holdCeilings, []) : [];
    if (needs(selection).catalogues) await apiRuns(list, rows, selection);
    const webhookCeilingRows = runsAny(selection, 'webhooks')
      ? await attempt('BullMQ no-op ceiling', noopCeiling, [])
      : [];
    if (receiver) await dispatcherRuns(list, receiver, rows, selection);

    const before = list.some((checkout) => checkout.label === 'before');
    const table = [
      ...holdCeilingRows,
      ...merge(rows.holds),
      ...merge(rows.reads),
      ...merge(rows.bookings),
      ...webhookCeilingRows,
      ...merge(rows.dispatcher),
      ...merge(rows.scale),
    ];
    const seconds = Math.round((Date.now() - startedAt) / 1000);
    console.log('');
    printTable(table, runNotes(selection, seconds, before, table));
    for (const failure of failures) console.log(`FAILED: ${failure.scenario}: ${failure.error}`);
    const file = writeJson(selection.full ? 'latest.json' : 'partial.json', table, {
      ...(selection.full ? {} : { groups: selection.groups }),
      failures,
      seconds,
      connections: CONNECTIONS,
      warmup_seconds: WARMUP_SECONDS,
      duration_seconds: DURATION_SECONDS,
      webhook_concurrency: WEBHOOK_CONCURRENCY,
      pinned: CAN_PIN,
    });
    process.stderr.write(`\nwrote ${file}\n`);
  } finally {
    await stopAll();
    await receiver?.close();
  }
}

// A failed scenario leaves the others' figures written, and the run's status says it failed.
runBench(
  () => main(commandLineSelection()),
  () => (failures.length > 0 ? 1 : 0),
);
