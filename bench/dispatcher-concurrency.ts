/**
 * `pnpm bench:dispatcher`: how many deliveries one dispatcher process sends per second with 10, 25,
 * 50 (`pnpm bench`'s), 100 and 200 in flight with no bound per endpoint, and with the defaults (50
 * in flight, at most 10 requests at once to the one endpoint), and where the CPU goes at each
 * (docs/operations.md sizes WEBHOOK_CONCURRENCY with it). A job holds its slot until its attempt is
 * committed and BullMQ has marked it done, so the count in flight bounds the rate, and the batches
 * it allows set the CPU each delivery costs. Each setting runs the burst of `pnpm bench` (3,000
 * events committed at once, to one receiver answering at once) in a dispatcher process of its own,
 * started and warmed up for each of its bursts; the settings take turns over as many rounds as
 * there are settings, in an order that turns each round, so each runs once in each place and the
 * drift of a shared machine and the growing tables fall on all of them alike. Prints its rows;
 * bench/results/latest.json stays the full bench's.
 */
import { rssMb, runBench, stopAll, stopChild } from './lib/children';
import { benchDatabase, loadCheckout } from './lib/checkout';
import { databaseUrl, ROOT } from './lib/env';
import { roundOrder, roundsFor } from './lib/load';
import { prepareOutbox, removeOutbox, startDispatcher } from './lib/outbox';
import { startReceiver } from './lib/receiver';
import { printTable, type Row } from './lib/report';
import { BURST_EVENTS, mergeBursts, oneBurst, warmUp, type BurstRound } from './scenarios/webhooks';

/** Deliveries in flight (WEBHOOK_CONCURRENCY) and requests to the one endpoint at most (WEBHOOK_ENDPOINT_CONCURRENCY). */
interface Setting {
  inFlight: number;
  perEndpoint: number;
}

const unbounded = (inFlight: number): Setting => ({ inFlight, perEndpoint: inFlight });
/** The counts, each with no per-endpoint bound, then the defaults: 50 in flight, 10 to the endpoint. */
const SETTINGS: Setting[] = [...[10, 25, 50, 100, 200].map(unbounded), { inFlight: 50, perEndpoint: 10 }];
/** One per setting, so each runs once in each place. */
const SWEEP_ROUNDS = roundsFor(SETTINGS.length);
const label = ({ inFlight, perEndpoint }: Setting) =>
  `${inFlight} deliveries in flight${perEndpoint < inFlight ? `, ${perEndpoint} requests to the endpoint at once (the defaults)` : ''}`;
const rowName = (setting: Setting) => `dispatcher burst, ${label(setting)}`;

async function main(): Promise<void> {
  const checkout = await loadCheckout('after', ROOT);
  const receiver = await startReceiver();
  const outbox = await prepareOutbox(
    checkout,
    databaseUrl(benchDatabase(checkout, 'booking_bench_webhooks')),
    receiver,
  );
  const rows: Row[] = [];
  try {
    const bursts = new Map<Setting, BurstRound[]>(SETTINGS.map((setting) => [setting, []]));
    const rss = new Map<Setting, number>();
    process.stderr.write(`${SETTINGS.map(label).join('; ')}: ${SWEEP_ROUNDS} rounds... `);
    for (let round = 0; round < SWEEP_ROUNDS; round += 1)
      for (const setting of roundOrder(SETTINGS, round)) {
        const dispatcher = await startDispatcher(outbox, `dispatcher (${label(setting)})`, {
          concurrency: setting.inFlight,
          perEndpoint: setting.perEndpoint,
        });
        try {
          await warmUp(outbox, receiver).catch((error: unknown) => {
            throw new Error(`${label(setting)}: ${error instanceof Error ? error.message : String(error)}`);
          });
          bursts.get(setting)!.push(await oneBurst(outbox, receiver));
          rss.set(setting, rssMb(dispatcher));
        } finally {
          await stopChild(dispatcher);
        }
      }
    process.stderr.write('done\n');
    for (const setting of SETTINGS) {
      const result = await mergeBursts(outbox, receiver, bursts.get(setting)!);
      rows.push({
        name: rowName(setting),
        unit: 'per_s',
        ...(setting === SETTINGS[0] ? {} : { against: rowName(SETTINGS[0]!) }),
        value: result.perSecond,
        p50: result.p50,
        p99: result.p99,
        rssMb: { dispatcher: rss.get(setting)! },
        note: result.note,
      });
    }
    console.log('');
    printTable(rows, [
      `Loopback, one dispatcher process (not pinned) at a time, WEBHOOK_CONCURRENCY as named (WEBHOOK_ENDPOINT_CONCURRENCY the same unless named); ${SWEEP_ROUNDS} bursts of ${BURST_EVENTS} events per row, ` +
        'each in a fresh process after a warm-up burst, timed from the commit to the last arrival at a receiver on 127.0.0.1 that answers at once.',
    ]);
  } finally {
    await receiver.close();
    await removeOutbox(outbox);
    await stopAll();
  }
}

runBench(main);
