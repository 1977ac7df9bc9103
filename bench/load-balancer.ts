/**
 * `pnpm bench:lb`: the load-balancer scenario of `pnpm bench` on its own: holds and the widget
 * read through HAProxy in front of 1 API replica and of 2, side by side (docs/testing.md).
 * Prints its rows; bench/results/latest.json stays the full bench's.
 */
import { prepareCatalogue } from './lib/catalogue';
import { CAN_PIN, runBench, stopAll } from './lib/children';
import { benchDatabase, loadCheckout } from './lib/checkout';
import { databaseUrl, ROOT } from './lib/env';
import { CONNECTIONS, DURATION_SECONDS, WARMUP_SECONDS } from './lib/load';
import { printTable } from './lib/report';
import { apiLoadBalancer } from './scenarios/load-balancer';
import { scaleNote } from './scenarios/scale';

async function main(): Promise<void> {
  const checkout = await loadCheckout('after', ROOT);
  const url = databaseUrl(benchDatabase(checkout, 'booking_bench'));
  const target = await prepareCatalogue(checkout, url);
  try {
    const rows = (await apiLoadBalancer([{ checkout, databaseUrl: url, target }])).after;
    console.log('');
    printTable(rows, [
      `Loopback, HAProxy (not pinned) in front of the API replicas. HTTP: ${CONNECTIONS} connections to the proxy, ${WARMUP_SECONDS} s warm-up + ${DURATION_SECONDS} s.`,
      CAN_PIN ? scaleNote(false) : 'taskset is not available: the replicas are not pinned.',
    ]);
  } finally {
    await target.close();
    await stopAll();
  }
}

runBench(main);
