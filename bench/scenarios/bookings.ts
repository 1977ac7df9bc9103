import { randomUUID } from 'node:crypto';
import { bookingBody, bookingRequests, prepareBookings, type Api } from '../lib/api';
import type { Target } from '../lib/catalogue';
import { rssMb, stopChild } from '../lib/children';
import { figures, measure, posts, roundRobin } from '../lib/load';
import type { Row } from '../lib/report';
import { MANY_SLOTS, startCeiling } from './holds';

const WARMUP = 200;
const AMOUNT = 2_000;

const CEILING_MANY = `booking ceiling: raw pg, one transaction, ${MANY_SLOTS} slots`;
const CEILING_HOT = 'booking ceiling: raw pg, one transaction, 1 hot slot';
const API_MANY = `booking via API, ${MANY_SLOTS} slots (each converts a fresh hold)`;
const API_HOT = 'booking via API, 1 hot slot (each converts a fresh hold)';

/** The bare booking ceiling on raw pg, on 200 slots and on one hot slot, in the checkout's database. */
export async function bookingCeilings(target: Target, databaseUrl: string): Promise<Row[]> {
  const ceiling = await startCeiling(
    'booking ceiling',
    'bench/ceilings/booking-server.ts',
    { DATABASE_URL: databaseUrl },
    '/',
  );
  const rows: Row[] = [];
  try {
    for (const [name, count] of [
      [CEILING_MANY, MANY_SLOTS],
      [CEILING_HOT, 1],
    ] as const) {
      const nextSlot = roundRobin(await target.makeSlots(count));
      const run = {
        urls: [ceiling.url],
        requests: posts('/api/bookings', () => bookingBody(target, nextSlot(), randomUUID()), false),
      };
      const m = await measure(name, { ...run, amount: AMOUNT }, { ...run, amount: WARMUP });
      rows.push({ name, unit: 'rps', ...figures(m) });
    }
  } finally {
    await stopChild(ceiling.child);
  }
  return rows;
}

/** Bookings through the API on 200 slots and on one hot slot, each converting a hold placed beforehand through the API. */
export async function apiBookings(api: Api, target: Target): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, against, count] of [
    [API_MANY, CEILING_MANY, MANY_SLOTS],
    [API_HOT, CEILING_HOT, 1],
  ] as const) {
    const slots = await target.makeSlots(count);
    process.stderr.write(`${name}: placing ${WARMUP + AMOUNT} holds through the API... `);
    const started = Date.now();
    // A few spare: autocannon may send a request or two past its amount per connection.
    const bodies = await prepareBookings(api, target, slots, WARMUP + AMOUNT + 100);
    process.stderr.write(`${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    const requests = bookingRequests(bodies);
    const m = await measure(
      name,
      { urls: [api.url], requests, amount: AMOUNT },
      { urls: [api.url], requests, amount: WARMUP },
    );
    rows.push({ name, unit: 'rps', against, goal: { minRatio: 0.8 }, ...figures(m), rssMb: { api: rssMb(api.child) } });
  }
  return rows;
}
