import { randomUUID } from 'node:crypto';
import { bookingBody, bookingRequests, prepareBookings, sideLabel, type CheckoutApi } from '../lib/api';
import type { Target } from '../lib/catalogue';
import { rssMb, stopChild } from '../lib/children';
import {
  CONNECTIONS,
  figures,
  measureSideBySide,
  roundsFor,
  posts,
  roundRobin,
  type Run,
  type Side,
} from '../lib/load';
import { noRows, type CheckoutRows } from '../lib/report';
import { startCeiling } from '../lib/baseline';
import { MANY_SLOTS } from './holds';

const WARMUP = 200;
const AMOUNT = 2_000;

const CEILING_MANY = `booking ceiling: raw pg, one transaction, ${MANY_SLOTS} slots`;
const CEILING_HOT = 'booking ceiling: raw pg, one transaction, 1 hot slot';
const API_MANY = `booking via API, ${MANY_SLOTS} slots (each converts a fresh hold)`;
const API_HOT = 'booking via API, 1 hot slot (each converts a fresh hold)';

/**
 * Bookings through each checkout's API on 200 slots and on one hot slot, each converting a hold
 * placed beforehand through the API, measured side by side in rounds with the bare booking
 * ceiling on raw pg: the ceiling rows every checkout's ratios are taken against. The ceiling runs
 * in this checkout's database (its statement is this checkout's), on slots of its own.
 */
export async function apiBookings(apps: CheckoutApi[]): Promise<CheckoutRows> {
  const [after] = apps.filter((app) => app.checkout.label === 'after');
  if (!after) throw new Error('the booking ceiling runs in the after checkout, which is missing');
  const ceiling = await startCeiling(
    'booking ceiling',
    'bench/ceilings/booking-server.ts',
    { DATABASE_URL: after.databaseUrl },
    '/',
  );
  const rows = noRows();
  try {
    for (const [name, ceilingName, count] of [
      [API_MANY, CEILING_MANY, MANY_SLOTS],
      [API_HOT, CEILING_HOT, 1],
    ] as const) {
      const ceilingRun = await ceilingBookings(ceiling.url, after.target, count);
      const sides: Side[] = [
        { label: ceilingName, run: { ...ceilingRun, amount: AMOUNT }, warmup: { ...ceilingRun, amount: WARMUP } },
      ];
      for (const app of apps) {
        const apiRun = await apiBookingRun(app, sideLabel(name, app.checkout), count, roundsFor(1 + apps.length));
        sides.push({
          label: sideLabel(name, app.checkout),
          run: { ...apiRun, amount: AMOUNT },
          warmup: { ...apiRun, amount: WARMUP },
        });
      }
      const [bare, ...measured] = await measureSideBySide(sides);
      rows.after.push({ name: ceilingName, unit: 'rps', ...figures(bare!) });
      apps.forEach((app, i) =>
        rows[app.checkout.label].push({
          name,
          unit: 'rps',
          against: ceilingName,
          goal: { minRatio: 0.8 },
          ...figures(measured[i]!),
          rssMb: { api: rssMb(app.api.child) },
        }),
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

/** Bookings through a checkout's API on `count` fresh slots, converting holds placed now for the warm-up and every round. */
async function apiBookingRun(app: CheckoutApi, label: string, count: number, rounds: number): Promise<Run> {
  const slots = await app.target.makeSlots(count);
  // Spares: autocannon may send a request or two past its amount per connection, in the warm-up
  // and in each round.
  const holds = WARMUP + AMOUNT + (rounds + 1) * CONNECTIONS;
  process.stderr.write(`${label}: placing ${holds} holds through the API... `);
  const started = Date.now();
  const bodies = await prepareBookings(app.api, app.target, slots, holds);
  process.stderr.write(`${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return { urls: [app.api.url], requests: bookingRequests(bodies) };
}
