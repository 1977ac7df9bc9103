import { randomUUID } from 'node:crypto';
import { bookingBody, bookingRequests, prepareBookings, type Api } from '../lib/api';
import type { Target } from '../lib/catalogue';
import { rssMb, stopChild } from '../lib/children';
import { CONNECTIONS, figures, measurePair, PAIR_ROUNDS, posts, roundRobin, type Run } from '../lib/load';
import type { Row } from '../lib/report';
import { startCeiling } from '../lib/baseline';
import { MANY_SLOTS } from './holds';

const WARMUP = 200;
const AMOUNT = 2_000;

const CEILING_MANY = `booking ceiling: raw pg, one transaction, ${MANY_SLOTS} slots`;
const CEILING_HOT = 'booking ceiling: raw pg, one transaction, 1 hot slot';
const API_MANY = `booking via API, ${MANY_SLOTS} slots (each converts a fresh hold)`;
const API_HOT = 'booking via API, 1 hot slot (each converts a fresh hold)';

/**
 * Bookings through the API on 200 slots and on one hot slot, each converting a hold placed
 * beforehand through the API, each measured in rounds alternating with the bare booking ceiling
 * on raw pg (in the same database, on slots of its own): the ceiling rows the API's ratios are
 * taken against.
 */
export async function apiBookings(api: Api, target: Target, databaseUrl: string): Promise<Row[]> {
  const ceiling = await startCeiling(
    'booking ceiling',
    'bench/ceilings/booking-server.ts',
    { DATABASE_URL: databaseUrl },
    '/',
  );
  const rows: Row[] = [];
  try {
    for (const [name, ceilingName, count] of [
      [API_MANY, CEILING_MANY, MANY_SLOTS],
      [API_HOT, CEILING_HOT, 1],
    ] as const) {
      const ceilingRun = await ceilingBookings(ceiling.url, target, count);
      const apiRun = await apiBookingRun(api, target, name, count);
      const [bare, m] = await measurePair(
        { label: ceilingName, run: { ...ceilingRun, amount: AMOUNT }, warmup: { ...ceilingRun, amount: WARMUP } },
        { label: name, run: { ...apiRun, amount: AMOUNT }, warmup: { ...apiRun, amount: WARMUP } },
      );
      rows.push(
        { name: ceilingName, unit: 'rps', ...figures(bare) },
        {
          name,
          unit: 'rps',
          against: ceilingName,
          goal: { minRatio: 0.8 },
          ...figures(m),
          rssMb: { api: rssMb(api.child) },
        },
      );
    }
  } finally {
    await stopChild(ceiling.child);
  }
  return rows;
}

/** Bookings on the bare ceiling, on `count` fresh slots of its own. */
async function ceilingBookings(url: string, target: Target, count: number): Promise<Run> {
  const nextSlot = roundRobin(await target.makeSlots(count));
  return {
    urls: [url],
    requests: posts('/api/bookings', () => bookingBody(target, nextSlot(), randomUUID()), false),
  };
}

/** Bookings through the API on `count` fresh slots, converting holds placed now for the warm-up and every round. */
async function apiBookingRun(api: Api, target: Target, name: string, count: number): Promise<Run> {
  const slots = await target.makeSlots(count);
  process.stderr.write(`${name}: placing ${WARMUP + AMOUNT} holds through the API... `);
  const started = Date.now();
  // Spares: autocannon may send a request or two past its amount per connection, in the warm-up
  // and in each round.
  const bodies = await prepareBookings(api, target, slots, WARMUP + AMOUNT + (PAIR_ROUNDS + 1) * CONNECTIONS);
  process.stderr.write(`${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return { urls: [api.url], requests: bookingRequests(bodies) };
}
