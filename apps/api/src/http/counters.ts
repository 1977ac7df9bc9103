import { Counter, Histogram, Registry } from 'prom-client';

/**
 * The API's counters and its request histogram: facts of the process, whichever app or use case
 * counts them, so they live here once (not in AppDeps) and every outcome is counted where it is
 * decided. `createApiMetrics` serves them with the gauges read on each scrape.
 */
export const countersRegistry = new Registry();

export const requestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request arriving to its answer being sent, by method, route template (unmatched: no route) and status; _count is the request count',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [countersRegistry],
});

const holdsPlaced = new Counter({
  name: 'holds_placed_total',
  help: 'Holds placed (a retry that found its hold again is not counted)',
  registers: [countersRegistry],
});

const holdsRefused = new Counter({
  name: 'holds_refused_total',
  help: 'Holds refused by the hold script, by reason: full, started, party_size, slot_not_found, experience_mismatch',
  labelNames: ['reason'] as const,
  registers: [countersRegistry],
});

const bookingsCreated = new Counter({
  name: 'bookings_created_total',
  help: 'Bookings created from a hold, by the status they were created in: held (to be paid) or confirmed (paid in full at once)',
  labelNames: ['status'] as const,
  registers: [countersRegistry],
});

const bookingsConfirmed = new Counter({
  name: 'bookings_confirmed_total',
  help: 'Bookings confirmed, by how they were paid: card, gift_card, cash, membership',
  labelNames: ['method'] as const,
  registers: [countersRegistry],
});

const idempotentReplays = new Counter({
  name: 'idempotent_replays_total',
  help: 'Answers given again to a retry with the same Idempotency-Key, by route template',
  labelNames: ['route'] as const,
  registers: [countersRegistry],
});

const rateLimited = new Counter({
  name: 'rate_limited_requests_total',
  help: 'Requests refused with 429 by a per-IP rate limit, by limiter',
  labelNames: ['limiter'] as const,
  registers: [countersRegistry],
});

/**
 * Counts what the hold script (HoldStore.place) decided: `placed`, `existed` (a retry's hold found
 * again, counted as a replay by the route) or the reason of a refusal.
 */
export function countHold(outcome: string): void {
  if (outcome === 'placed') holdsPlaced.inc();
  else if (outcome !== 'existed') holdsRefused.inc({ reason: outcome });
}

export function countBookingCreated(status: 'held' | 'confirmed'): void {
  bookingsCreated.inc({ status });
}

export function countBookingConfirmed(method: string): void {
  bookingsConfirmed.inc({ method });
}

export function countReplay(route: string): void {
  idempotentReplays.inc({ route });
}

export function countRateLimited(limiter: string): void {
  rateLimited.inc({ limiter });
}
