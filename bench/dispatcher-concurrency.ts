/**
 * `pnpm bench:dispatcher`: how many deliveries one dispatcher process sends per second with 10,
 * 25, 50 (WEBHOOK_CONCURRENCY's default, and `pnpm bench`'s), 100 and 200 in flight, and where the
 * CPU goes at each (docs/operations.md sizes WEBHOOK_CONCURRENCY with it). A job holds its place
 * until its attempt is committed and BullMQ has marked it done, so the count in flight bounds the
 * rate, and the batches it allows set the CPU each delivery costs. Each count runs the burst of
 * `pnpm bench` (3,000 events committed at once, to one receiver answering at once) in a
 * dispatcher process of its own, started and warmed up for each of its bursts; the counts take
 * turns over as many rounds as there are counts, in an order that turns each round, so each
 * count runs once in each place and the drift of a shared machine and the growing tables fall on
 * all of them alike. Prints its rows; bench/results/latest.json stays the full bench's.
 */
import { rssMb, runBench, stopAll, stopChild } from './lib/children';
import { benchDatabase, loadCheckout } from './lib/checkout';
import { databaseUrl, ROOT } from './lib/env';
import { roundOrder, roundsFor } from './lib/load';
import { prepareOutbox, removeOutbox, startDispatcher } from './lib/outbox';
import { startReceiver } from './lib/receiver';
import { printTable, type Row } from './lib/report';
import { BURST_EVENTS, mergeBursts, oneBurst, warmUp, type BurstRound } from './scenarios/webhooks';

const IN_FLIGHT = [10, 25, 50, 100, 200];
/** One per count, so each runs once in each place. */
const SWEEP_ROUNDS = roundsFor(IN_FLIGHT.length);
const rowName = (inFlight: number) => `dispatcher burst, ${inFlight} deliveries in flight`;

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
    const bursts = new Map<number, BurstRound[]>(IN_FLIGHT.map((inFlight) => [inFlight, []]));
    const rss = new Map<number, number>();
    process.stderr.write(`${IN_FLIGHT.join(', ')} deliveries in flight: ${SWEEP_ROUNDS} rounds... `);
    for (let round = 0; round < SWEEP_ROUNDS; round += 1)
      for (const inFlight of roundOrder(IN_FLIGHT, round)) {
        const dispatcher = await startDispatcher(outbox, `dispatcher (${inFlight} in flight)`, {
          concurrency: inFlight,
        });
        try {
          await warmUp(outbox, receiver).catch((error: unknown) => {
            throw new Error(`${inFlight} in flight: ${error instanceof Error ? error.message : String(error)}`);
          });
          bursts.get(inFlight)!.push(await oneBurst(outbox, receiver));
          rss.set(inFlight, rssMb(dispatcher));
        } finally {
          await stopChild(dispatcher);
        }
      }
    process.stderr.write('done\n');
    for (const inFlight of IN_FLIGHT) {
      const result = await mergeBursts(outbox, receiver, bursts.get(inFlight)!);
      rows.push({
        name: rowName(inFlight),
        unit: 'per_s',
        ...(inFlight === IN_FLIGHT[0] ? {} : { against: rowName(IN_FLIGHT[0]!) }),
        value: result.perSecond,
        p50: result.p50,
        p99: result.p99,
        rssMb: { dispatcher: rss.get(inFlight)! },
        note: result.note,
      });
    }
    console.log('');
    printTable(rows, [
      `Loopback, one dispatcher process (not pinned) at a time, WEBHOOK_CONCURRENCY as named (WEBHOOK_ENDPOINT_CONCURRENCY the same); ${SWEEP_ROUNDS} bursts of ${BURST_EVENTS} events per row, ` +
        'each in a fresh process after a warm-up burst, timed from the commit to the last arrival at a receiver on 127.0.0.1 that answers at once.',
    ]);
  } finally {
    await receiver.close();
    await removeOutbox(outbox);
    await stopAll();
  }
}

runBench(main);
