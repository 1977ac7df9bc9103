/**
 * `pnpm bench:dispatcher`: how many deliveries one dispatcher process sends per second with 10
 * (WEBHOOK_CONCURRENCY's default), 25, 50 (`pnpm bench`'s), 100 and 200 in flight, and where the
 * CPU goes at each (docs/operations.md sizes WEBHOOK_CONCURRENCY with it). A job holds its slot
 * through its read, its POST and its batch's commit, so the count in flight bounds the rate, and
 * the batches it allows set the CPU each delivery costs. Each count runs the burst of `pnpm bench`
 * (3,000 events committed at once, to one receiver answering at once) in its own dispatcher
 * process, one count after the other: the differences are several times the run-to-run noise.
 * Prints its rows; bench/results/latest.json stays the full bench's.
 */
import { rssMb, runBench, stopAll, stopChild } from './lib/children';
import { benchDatabase, loadCheckout } from './lib/checkout';
import { databaseUrl, ROOT } from './lib/env';
import { ROUNDS } from './lib/load';
import { prepareOutbox, startDispatcher } from './lib/outbox';
import { startReceiver } from './lib/receiver';
import { printTable, type Row } from './lib/report';
import { BURST_EVENTS, mergeBursts, oneBurst, warmUp, type BurstRound } from './scenarios/webhooks';

const IN_FLIGHT = [10, 25, 50, 100, 200];
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
    for (const inFlight of IN_FLIGHT) {
      const name = rowName(inFlight);
      const dispatcher = await startDispatcher(outbox, `dispatcher (${inFlight} in flight)`, { concurrency: inFlight });
      try {
        process.stderr.write(`${name}: warming up, then ${ROUNDS} bursts... `);
        await warmUp(outbox, receiver);
        const rounds: BurstRound[] = [];
        for (let round = 0; round < ROUNDS; round += 1) rounds.push(await oneBurst(outbox, receiver));
        const result = await mergeBursts(outbox, receiver, rounds);
        process.stderr.write(`${result.perSecond.toFixed(0)} deliveries/s\n`);
        rows.push({
          name,
          unit: 'per_s',
          ...(inFlight === IN_FLIGHT[0] ? {} : { against: rowName(IN_FLIGHT[0]!) }),
          value: result.perSecond,
          p50: result.p50,
          p99: result.p99,
          rssMb: { dispatcher: rssMb(dispatcher) },
          note: result.note,
        });
      } finally {
        await stopChild(dispatcher);
      }
    }
    console.log('');
    printTable(rows, [
      `Loopback, one dispatcher process (not pinned) per row, WEBHOOK_CONCURRENCY as named; ${ROUNDS} bursts of ${BURST_EVENTS} events each, ` +
        'timed from the commit to the last arrival at a receiver on 127.0.0.1 that answers at once.',
    ]);
  } finally {
    await receiver.close();
    await outbox.db.$disconnect();
    await stopAll();
  }
}

runBench(main);
