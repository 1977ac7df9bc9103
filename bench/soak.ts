/**
 * `pnpm bench:soak`: holds and bookings at a steady rate through one API process, their events
 * delivered by one dispatcher to a local receiver, for BENCH_SOAK_SECONDS (default 600; also
 * `--seconds=60`). Prints the API's and the dispatcher's RSS and memory in use every 30 s and,
 * at the end, a verdict on growth of the memory each keeps (see `verdict`). RSS is printed beside
 * it but does not decide it: it follows the collector's sawtooth.
 * Rates: BENCH_SOAK_HOLDS_PER_S (default 200) holds of 1 seat over 200 slots, and
 * BENCH_SOAK_BOOKINGS_PER_S (default 50) bookings, each converting a hold of 2 seats placed just
 * before it. Requests are sent open-loop; past 500 in flight a tick's requests are skipped and
 * counted, so an overloaded API shows as skips, not as a slower pace.
 */
import { randomUUID } from 'node:crypto';
import { holdBody, startApi } from './lib/api';
import { prepareCatalogue, type Target } from './lib/catalogue';
import { rssMb, runBench, stopChild, type Child } from './lib/children';
import { loadCheckout } from './lib/checkout';
import { sleep } from '@booking/test-kit';
import { databaseUrl, REDIS_URL, ROOT } from './lib/env';
import { percentile } from './lib/load';
import { keptMb, readMemory, type MemoryReading } from './lib/memory';
import { postJson } from './lib/post-json';
import { prepareOutbox, removeOutbox, startDispatcher } from './lib/outbox';
import { startReceiver } from './lib/receiver';

const flag = process.argv.find((arg) => arg.startsWith('--seconds='));
const SECONDS = Number(flag?.slice('--seconds='.length) ?? process.env.BENCH_SOAK_SECONDS ?? 600);
const HOLDS_PER_S = Number(process.env.BENCH_SOAK_HOLDS_PER_S ?? 200);
const BOOKINGS_PER_S = Number(process.env.BENCH_SOAK_BOOKINGS_PER_S ?? 50);
const TICK_MS = 100;
const MAX_IN_FLIGHT = 500;
/** Memory is sampled this often: the closer to a collection the lowest sample, the nearer the kept memory. */
const SAMPLE_MS = 1_000;
const PRINT_MS = 30_000;
/** Growth of the kept memory over the run, by its trend line, that the verdict calls growth. */
const GROWTH_LIMIT = 0.1;

const APPS = ['api', 'dispatcher'] as const;
type App = (typeof APPS)[number];

interface Sample {
  at: number;
  rss: Record<App, number>;
  memory: Record<App, MemoryReading | undefined>;
}

interface Tally {
  holds: number;
  bookings: number;
  failed: number;
  skipped: number;
  latencies: number[];
}

async function post(
  url: string,
  body: object,
  tally: Tally,
): Promise<{ status: number; answer: { hold_id?: string } }> {
  const started = performance.now();
  const answer = await postJson<{ hold_id?: string }>(url, body);
  tally.latencies.push(performance.now() - started);
  return answer;
}

async function holdThenBook(apiUrl: string, target: Target, slotId: string, tally: Tally): Promise<void> {
  const hold = await post(`${apiUrl}/api/bookings/hold`, holdBody(target.experienceId, slotId, 2), tally);
  if (hold.status !== 200 || !hold.answer.hold_id) throw new Error(`hold: HTTP ${hold.status}`);
  tally.holds += 1;
  const booking = await post(
    `${apiUrl}/api/bookings`,
    {
      hold_id: hold.answer.hold_id,
      slot_id: slotId,
      experience_id: target.experienceId,
      venue_id: target.venueId,
      guest_count: 1,
      customer: { email: `soak-${randomUUID()}@example.com`, first_name: 'Soak' },
    },
    tally,
  );
  if (booking.status !== 201) throw new Error(`booking: HTTP ${booking.status}`);
  tally.bookings += 1;
}

function mean(values: number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/**
 * Whether `app` kept more memory at the end than after its warm-up. The run is cut into windows
 * (minutes; quarters of a run shorter than 4 minutes); the first is the warm-up (JIT, pools and
 * caches filling) and is left out. Each later window gives the memory kept in it (keptMb), when a
 * major collection ran in it. A least-squares line through those figures gives the growth over
 * the windows' span, as a share of their mean; more than GROWTH_LIMIT is growth. The line uses
 * every window, so one high or low figure moves it less than it moves a comparison of two ends.
 */
function verdict(app: App, samples: Sample[]): string {
  const windowMs = Math.min(60_000, (SECONDS * 1000) / 4);
  const count = Math.floor((SECONDS * 1000) / windowMs);
  const windows = Array.from({ length: count }, (_, i) => samples.filter((s) => Math.floor(s.at / windowMs) === i));
  const kept = windows.map((window, i) => {
    const before = windows[i - 1]?.filter((s) => s.memory[app] !== undefined).at(-1)?.memory[app];
    return keptMb(
      window.map((s) => s.memory[app]).filter((m): m is MemoryReading => m !== undefined),
      before,
    );
  });
  const points = kept.flatMap((mb, i) => (i > 0 && mb !== undefined ? [{ x: i, y: mb }] : []));
  const byWindow = kept.map((mb) => (mb === undefined ? '-' : mb.toFixed(0))).join(' ');
  const rss = (from: number, to: number) =>
    mean(
      windows
        .slice(from, to)
        .flat()
        .map((s) => s.rss[app]),
    );
  const rssText = `mean RSS ${rss(1, 2).toFixed(0)} MB in the first window after the warm-up, ${rss(count - 1, count).toFixed(0)} MB in the last`;
  const first = points[0];
  const last = points.at(-1);
  // A line needs two points, and a span that means something: from the first third to the last.
  if (!first || !last || first.x > count / 3 || last.x < (2 * count) / 3) {
    return `${app}: UNKNOWN (too few windows with a major collection; kept MB by window: ${byWindow}); ${rssText}`;
  }
  const meanX = mean(points.map((p) => p.x));
  const meanY = mean(points.map((p) => p.y));
  const slope =
    points.reduce((sum, p) => sum + (p.x - meanX) * (p.y - meanY), 0) /
    points.reduce((sum, p) => sum + (p.x - meanX) ** 2, 0);
  const growth = (slope * (last.x - first.x)) / meanY;
  const ys = points.map((p) => p.y);
  return `${app}: kept memory ${meanY.toFixed(0)} MB on average (${Math.min(...ys).toFixed(0)}-${Math.max(...ys).toFixed(0)} over ${points.length} windows), trend ${(growth * 100).toFixed(1)}% over the run -> ${growth > GROWTH_LIMIT ? 'GROWS' : 'no growth'} (limit ${GROWTH_LIMIT * 100}%); kept MB by window: ${byWindow}; ${rssText}`;
}

async function main(): Promise<void> {
  if (!(SECONDS > 0)) throw new Error('the duration must be a positive number of seconds');
  const checkout = await loadCheckout('after', ROOT);
  const url = databaseUrl('booking_bench');
  const receiver = await startReceiver();
  const target = await prepareCatalogue(checkout, url);
  const outbox = await prepareOutbox(checkout, url, receiver, target.tenantId);
  const children: Child[] = [];
  try {
    const api = await startApi(checkout, url);
    children.push(api.child);
    const dispatcher = await startDispatcher(outbox, 'dispatcher');
    children.push(dispatcher);
    const slots = await target.makeSlots(200);
    const tally: Tally = { holds: 0, bookings: 0, failed: 0, skipped: 0, latencies: [] };
    const samples: Sample[] = [];
    const sampling = new Set<Promise<void>>();
    // Not awaited: a slow metrics answer (an overloaded API) must not hold back the senders.
    const sample = (at: number) => {
      const rss = { api: rssMb(api.child), dispatcher: rssMb(dispatcher) };
      const taken = Promise.all([readMemory(api.child), readMemory(dispatcher)]).then(([a, d]) => {
        samples.push({ at, rss, memory: { api: a, dispatcher: d } });
        sampling.delete(taken);
      });
      sampling.add(taken);
    };
    let inFlight = 0;
    let slot = 0;
    const send = (work: () => Promise<void>) => {
      if (inFlight >= MAX_IN_FLIGHT) {
        tally.skipped += 1;
        return;
      }
      inFlight += 1;
      work()
        .catch(() => (tally.failed += 1))
        .finally(() => (inFlight -= 1));
    };

    console.log(
      `soak: ${SECONDS} s, ${HOLDS_PER_S} holds/s + ${BOOKINGS_PER_S} bookings/s, database ${url}, redis ${REDIS_URL}`,
    );
    console.log(
      '| s | holds | bookings | failed | skipped | p50 ms | p99 ms | api RSS MB | api heap+ext MB | dispatcher RSS MB | dispatcher heap+ext MB |',
    );
    console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    const started = Date.now();
    const inUse = (m: MemoryReading | undefined) => (m ? (m.heapMb + m.externalMb).toFixed(0) : '-');
    /** One line of the table: totals so far, latency since the last line, the latest memory sample. */
    const printRow = (now: number) => {
      const latencies = tally.latencies.sort((a, b) => a - b);
      const latest = samples.reduce<Sample | undefined>((l, x) => (l && l.at > x.at ? l : x), undefined);
      const rss = (app: App) => latest?.rss[app].toFixed(0) ?? '-';
      console.log(
        `| ${Math.round((now - started) / 1000)} | ${tally.holds} | ${tally.bookings} | ${tally.failed} | ${tally.skipped} | ${percentile(latencies, 50).toFixed(1)} | ${percentile(latencies, 99).toFixed(1)} | ${rss('api')} | ${inUse(latest?.memory.api)} | ${rss('dispatcher')} | ${inUse(latest?.memory.dispatcher)} |`,
      );
      tally.latencies = [];
    };
    let nextSample = started;
    let nextPrint = started + PRINT_MS;
    // Fractions of a request per tick carry over, so any rate is kept on average.
    let holdsOwed = 0;
    let bookingsOwed = 0;
    for (let tick = 1; Date.now() - started < SECONDS * 1000; tick += 1) {
      holdsOwed += (HOLDS_PER_S * TICK_MS) / 1000;
      bookingsOwed += (BOOKINGS_PER_S * TICK_MS) / 1000;
      for (; holdsOwed >= 1; holdsOwed -= 1) {
        const slotId = slots[slot++ % slots.length]!;
        send(async () => {
          const hold = await post(`${api.url}/api/bookings/hold`, holdBody(target.experienceId, slotId), tally);
          if (hold.status !== 200) throw new Error(`hold: HTTP ${hold.status}`);
          tally.holds += 1;
        });
      }
      for (; bookingsOwed >= 1; bookingsOwed -= 1) {
        const slotId = slots[slot++ % slots.length]!;
        send(() => holdThenBook(api.url, target, slotId, tally));
      }
      const now = Date.now();
      if (now >= nextSample) {
        sample(now - started);
        nextSample += SAMPLE_MS;
      }
      if (now >= nextPrint) {
        printRow(now);
        nextPrint += PRINT_MS;
      }
      const wait = started + tick * TICK_MS - Date.now();
      if (wait > 0) await sleep(wait);
    }
    const drainDeadline = Date.now() + 15_000;
    while (inFlight > 0 && Date.now() < drainDeadline) await sleep(50);
    sample(Date.now() - started);
    await Promise.all([...sampling]);
    samples.sort((a, b) => a.at - b.at);
    printRow(Date.now());
    for (const app of APPS) console.log(verdict(app, samples));
    console.log(
      `${tally.holds} holds, ${tally.bookings} bookings, ${tally.failed} failed, ${tally.skipped} skipped (over ${MAX_IN_FLIGHT} in flight)`,
    );
  } finally {
    await Promise.all(children.map((child) => stopChild(child)));
    await receiver.close();
    await removeOutbox(outbox);
    await target.close();
  }
}

runBench(main);
