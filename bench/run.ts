/**
 * `pnpm bench`: every scenario of issue 12 with its ceilings, in one run, on loopback.
 *
 * Ceilings (from this checkout): the baseline (Express 5 + one Redis GET), the bare hold
 * ceiling, the bare booking ceiling on raw pg, BullMQ no-op jobs and BullMQ + one POST per job.
 * Apps (run for this checkout, and for BENCH_BEFORE_ROOT's when set, from its own root with its
 * own databases and queue prefix): holds, the widget read, bookings and the dispatcher burst through the real
 * processes, and their scaling over two pinned processes, directly and behind HAProxy; and the
 * relay's poll over relayed events awaiting VACUUM, bounded and not (this checkout). A row
 * whose ratio is to the baseline, the booking ceiling or the BullMQ + POST ceiling is measured in
 * rounds alternating with that ceiling's, for each checkout; the hold ceilings and the BullMQ
 * no-op ceiling run once. Measured rows note where the CPU went. Prints the table and writes
 * bench/results/latest.json. Everything shares one machine, so only ratios taken in one run mean
 * anything; docs/testing.md describes each scenario.
 */
import { createDeliveryQueue, queueConnection } from '@booking/webhook-queue';
import { startApi } from './lib/api';
import { prepareCatalogue } from './lib/catalogue';
import { CAN_PIN, runBench, stopAll, stopChild } from './lib/children';
import { benchDatabase, checkouts, type Checkout } from './lib/checkout';
import { databaseUrl, REDIS_URL } from './lib/env';
import { CONNECTIONS, DURATION_SECONDS, PAIR_ROUNDS, WARMUP_SECONDS } from './lib/load';
import { prepareOutbox, WEBHOOK_CONCURRENCY } from './lib/outbox';
import { startReceiver, type Receiver } from './lib/receiver';
import { printTable, writeJson, type Row } from './lib/report';
import { apiBookings } from './scenarios/bookings';
import { apiHolds, holdCeilings } from './scenarios/holds';
import { apiLoadBalancer } from './scenarios/load-balancer';
import { apiScale, dispatcherScale, SCALE_NOTE } from './scenarios/scale';
import { relayPollCost } from './scenarios/relay-poll';
import { dispatcherBurst, noopCeiling } from './scenarios/webhooks';
import { apiWidgetRead } from './scenarios/widget';

interface AppRows {
  holds: Row[];
  reads: Row[];
  bookings: Row[];
  dispatcher: Row[];
  scale: Row[];
}

/** Scenarios that failed, by name and error: the run goes on without their rows, and says so. */
const failures: { scenario: string; error: string }[] = [];

async function attempt(scenario: string, run: () => Promise<Row[]>): Promise<Row[]> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`\n${scenario} FAILED: ${message}\n`);
    failures.push({ scenario, error: message.slice(0, 500) });
    return [];
  }
}

/** Holds, the widget read, bookings and the API's scaling for one checkout; the booking ceiling runs in this checkout's database. */
async function apiRuns(checkout: Checkout, rows: AppRows): Promise<void> {
  const url = databaseUrl(benchDatabase(checkout, 'booking_bench'));
  process.stderr.write(`\n[${checkout.label}] ${checkout.root}, database ${url}\n`);
  const target = await prepareCatalogue(checkout, url);
  try {
    const api = await startApi(checkout, url);
    try {
      rows.holds.push(...(await attempt(`holds (${checkout.label})`, () => apiHolds(api, target))));
      rows.reads.push(...(await attempt(`widget read (${checkout.label})`, () => apiWidgetRead(api, target))));
      rows.bookings.push(...(await attempt(`bookings (${checkout.label})`, () => apiBookings(api, target, url))));
    } finally {
      await stopChild(api.child);
    }
    rows.scale.push(...(await attempt(`API scale (${checkout.label})`, () => apiScale(checkout, url, target))));
    rows.scale.push(
      ...(await attempt(`load balancer (${checkout.label})`, () => apiLoadBalancer(checkout, url, target))),
    );
  } finally {
    await target.close();
  }
}

async function dispatcherRuns(checkout: Checkout, receiver: Receiver, rows: AppRows): Promise<void> {
  const outbox = await prepareOutbox(
    checkout,
    databaseUrl(benchDatabase(checkout, 'booking_bench_webhooks')),
    receiver,
  );
  process.stderr.write(`\n[${checkout.label}] dispatcher, database ${outbox.databaseUrl}\n`);
  try {
    rows.dispatcher.push(...(await attempt(`dispatcher (${checkout.label})`, () => dispatcherBurst(outbox, receiver))));
    rows.scale.push(
      ...(await attempt(`dispatcher scale (${checkout.label})`, () => dispatcherScale(outbox, receiver))),
    );
    // This checkout's claim statement, bounded and not: the before checkout's may take no bound.
    if (checkout.label === 'after') rows.dispatcher.push(...(await attempt('relay poll', () => relayPollCost(outbox))));
  } finally {
    const connection = queueConnection(REDIS_URL);
    const queue = createDeliveryQueue(connection, outbox.queuePrefix);
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
    await outbox.db.$disconnect();
  }
}

/** This checkout's rows, each carrying the same scenario's figures from the before checkout. */
function merge(after: Row[], before: Row[] | undefined): Row[] {
  return after.map((row) => {
    const other = before?.find((r) => r.name === row.name);
    return other
      ? { ...row, before: { value: other.value, p50: other.p50, p99: other.p99, rssMb: other.rssMb, note: other.note } }
      : row;
  });
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const list = await checkouts();
  const receiver = await startReceiver();
  try {
    const byCheckout = new Map(
      list.map((c) => [c.label, { holds: [], reads: [], bookings: [], dispatcher: [], scale: [] } as AppRows]),
    );
    const holdCeilingRows = await attempt('hold ceilings', holdCeilings);
    for (const checkout of list) await apiRuns(checkout, byCheckout.get(checkout.label)!);
    const webhookCeilingRows = await attempt('BullMQ no-op ceiling', noopCeiling);
    for (const checkout of list) await dispatcherRuns(checkout, receiver, byCheckout.get(checkout.label)!);

    const after = byCheckout.get('after')!;
    const before = byCheckout.get('before');
    const rows = [
      ...holdCeilingRows,
      ...merge(after.holds, before?.holds),
      ...merge(after.reads, before?.reads),
      ...merge(after.bookings, before?.bookings),
      ...webhookCeilingRows,
      ...merge(after.dispatcher, before?.dispatcher),
      ...merge(after.scale, before?.scale),
    ];
    const seconds = Math.round((Date.now() - startedAt) / 1000);
    console.log('');
    printTable(rows, [
      `Loopback, one run, ${seconds} s. HTTP: ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s, bookings 200 warm-up + 2000; WEBHOOK_CONCURRENCY ${WEBHOOK_CONCURRENCY}.`,
      `Paired rows (a row against the baseline, a booking ceiling or the BullMQ + POST ceiling, and that ceiling's row; 1 against 2 APIs or dispatchers): one warm-up each, then ${PAIR_ROUNDS} alternating rounds of each (HTTP rounds 1/${PAIR_ROUNDS} of the measured time or amount; webhook rounds a whole burst).`,
      'Notes give the cores busy and the CPU ms per request, delivery or job of each process group over the measured rounds.',
      'PostgreSQL, Redis, the load generator and every app share this machine: compare ratios within this run only.',
      SCALE_NOTE,
      ...(before
        ? [
            "before = the same scenario on BENCH_BEFORE_ROOT's apps; its ratios against the baseline, a booking ceiling or the BullMQ + POST ceiling are against its own paired ceiling rounds, the others against this run's rows.",
          ]
        : []),
    ]);
    for (const failure of failures) console.log(`FAILED: ${failure.scenario}: ${failure.error}`);
    const file = writeJson(rows, {
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
    await receiver.close();
  }
}

// A failed scenario leaves the others' figures written, and the run's status says it failed.
runBench(main, () => (failures.length > 0 ? 1 : 0));
