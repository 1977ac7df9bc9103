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
 * drift of a shared machine and the growing tables fall on all of them alike.
 *
 * Then the defaults once more, in one burst behind another tenant's backlog: SLOW_BACKLOG
 * deliveries to an endpoint answering in SLOW_ANSWER_MS, committed and being sent before the
 * burst. Its jobs step aside rather than hold the worker slots, so the burst goes at about its own
 * rate; with BENCH_BEFORE_ROOT (a worktree of the commit to compare with) the same runs on that
 * checkout's dispatcher too. Prints its rows; bench/results/latest.json stays the full bench's.
 */
import { sleep } from '@booking/test-kit';
import { rssMb, runBench, stopAll, stopChild, type Child } from './lib/children';
import { benchDatabase, checkouts, type Checkout } from './lib/checkout';
import { databaseUrl } from './lib/env';
import { roundOrder, roundsFor } from './lib/load';
import { sample, scrape } from './lib/metrics';
import { addTenant, prepareOutbox, removeOutbox, startDispatcher, subscribe, writeBurst } from './lib/outbox';
import { startReceiver, type Receiver } from './lib/receiver';
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
const DEFAULTS = SETTINGS[SETTINGS.length - 1]!;

/** Deliveries to the slow endpoint, queued before the burst; sent 10 at a time, they take SLOW_BACKLOG / 10 seconds. */
const SLOW_BACKLOG = 300;
const SLOW_ANSWER_MS = 1_000;
/** Requests the slow endpoint has had before the burst is committed: its backlog is queued and being sent. */
const SLOW_STARTED = 10;

/** Jobs the dispatcher has stepped aside since it started; NaN from a checkout without the metric. */
async function steppedAside(dispatcher: Child): Promise<number> {
  const text = await scrape(dispatcher);
  return text === undefined ? NaN : sample(text, 'webhook_jobs_stepped_aside_total');
}

/**
 * One burst through a `checkout` dispatcher with the defaults, warmed up first, committed once
 * another tenant's backlog to `slow` is queued and being sent.
 */
async function burstBehindSlowBacklog(checkout: Checkout, receiver: Receiver, slow: Receiver): Promise<Row> {
  const outbox = await prepareOutbox(
    checkout,
    databaseUrl(benchDatabase(checkout, 'booking_bench_webhooks_slow')),
    receiver,
  );
  const name = `dispatcher burst, the defaults, behind ${SLOW_BACKLOG} deliveries to another endpoint answering in ${SLOW_ANSWER_MS} ms [${checkout.label}]`;
  let dispatcher: Child | undefined;
  try {
    dispatcher = await startDispatcher(outbox, `dispatcher (the defaults, ${checkout.label})`, {
      concurrency: DEFAULTS.inFlight,
      perEndpoint: DEFAULTS.perEndpoint,
    });
    await warmUp(outbox, receiver);
    const slowTenant = await addTenant(outbox.db);
    await subscribe(outbox, slowTenant, slow);
    const requests = () => [...slow.receipts.values()].reduce((sum, n) => sum + n, 0);
    const before = requests();
    await writeBurst({ ...outbox, tenantId: slowTenant }, SLOW_BACKLOG);
    for (let waited = 0; requests() - before < SLOW_STARTED; waited += 20) {
      if (waited > 30_000) throw new Error(`${name}: the slow endpoint's backlog was not being sent`);
      await sleep(20);
    }
    const result = await mergeBursts(outbox, receiver, [await oneBurst(outbox, receiver)]);
    // A checkout from before stepping aside has no such count.
    const count = await steppedAside(dispatcher);
    const stepped = Number.isNaN(count) ? '' : `${count} jobs stepped aside, warm-up included`;
    return {
      name,
      unit: 'per_s',
      against: rowName(DEFAULTS),
      value: result.perSecond,
      p50: result.p50,
      p99: result.p99,
      rssMb: { dispatcher: rssMb(dispatcher) },
      note: [`${requests() - before} requests to the slow endpoint meanwhile`, stepped, result.note]
        .filter(Boolean)
        .join('; '),
    };
  } finally {
    if (dispatcher) await stopChild(dispatcher);
    await removeOutbox(outbox);
  }
}

async function main(): Promise<void> {
  const sides = await checkouts();
  const checkout = sides[0]!;
  const receiver = await startReceiver();
  const slow = await startReceiver({ answerAfterMs: SLOW_ANSWER_MS });
  const outbox = await prepareOutbox(
    checkout,
    databaseUrl(benchDatabase(checkout, 'booking_bench_webhooks')),
    receiver,
  );
  const rows: Row[] = [];
  try {
    const bursts = new Map<Setting, BurstRound[]>(SETTINGS.map((setting) => [setting, []]));
    const rss = new Map<Setting, number>();
    const stepped = new Map<Setting, number>(SETTINGS.map((setting) => [setting, 0]));
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
          stepped.set(setting, stepped.get(setting)! + (await steppedAside(dispatcher)));
        } finally {
          await stopChild(dispatcher);
        }
      }
    process.stderr.write('done\n');
    const behindSlow: Row[] = [];
    for (const side of sides) {
      process.stderr.write(`the defaults behind a slow endpoint's backlog [${side.label}]... `);
      behindSlow.push(await burstBehindSlowBacklog(side, receiver, slow));
      process.stderr.write('done\n');
    }
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
        note:
          setting.perEndpoint < setting.inFlight
            ? `${stepped.get(setting)} jobs stepped aside, warm-ups included; ${result.note}`
            : result.note,
      });
    }
    rows.push(...behindSlow);
    console.log('');
    printTable(rows, [
      `Loopback, one dispatcher process (not pinned) at a time, WEBHOOK_CONCURRENCY as named (WEBHOOK_ENDPOINT_CONCURRENCY the same unless named); ${SWEEP_ROUNDS} bursts of ${BURST_EVENTS} events per row, ` +
        'each in a fresh process after a warm-up burst, timed from the commit to the last arrival at a receiver on 127.0.0.1 that answers at once.',
    ]);
  } finally {
    await Promise.all([receiver.close(), slow.close()]);
    await removeOutbox(outbox);
    await stopAll();
  }
}

runBench(main);
